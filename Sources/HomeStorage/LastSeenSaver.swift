public import HomeCore
public import HomeModel
public import Logging
import HashTreeCollections
import Synchronization

/// Saves when devices were last seen every `interval`, so a power cut loses at most one
/// interval of "last seen" (the core moves it in memory on every report; the database gets it
/// only on shape changes otherwise).
///
/// Each save writes only the devices whose time moved since the previous save; with nothing
/// new it does not touch the file. hearthd runs ``run()`` as a service and calls ``save()``
/// once more after every service has stopped.
///
/// ```swift
/// let saver = LastSeenSaver(core: core, database: database, interval: .seconds(60), clock: ContinuousClock())
/// await saver.run()   // until cancelled; saves once more on the way out
/// ```
public final class LastSeenSaver<C: Clock>: Sendable where C.Duration == Duration {
    public let interval: Duration
    let core: HomeCore
    let database: HearthDatabase
    let clock: C
    let logger: Logger
    /// The times the database has (as far as this saver knows), by device.
    let saved = Mutex<[DeviceID: UInt64]>([:])

    /// - Parameter interval: how often to save; must be positive.
    public init(
        core: HomeCore, database: HearthDatabase, interval: Duration = .seconds(60), clock: C,
        logger: Logger = Logger(label: "hearth.storage")
    ) {
        precondition(interval > .zero, "the last-seen interval must be positive")
        self.core = core
        self.database = database
        self.interval = interval
        self.clock = clock
        self.logger = logger
        // What restore() loaded is already in the file.
        saved.withLock { saved in
            for (id, at) in core.lastSeen { saved[id] = at }
        }
    }

    /// Writes the last-seen times that moved since the previous save.
    ///
    /// - Returns: how many devices were written (0: the file was not touched).
    /// - Throws: the database's error; what failed is tried again at the next save.
    @discardableResult
    public func save() throws(HomeError) -> Int {
        // One save at a time, so two never race to mark different snapshots as saved.
        try saved.withLock { saved throws(HomeError) -> Int in
            var changed: [DeviceID: UInt64] = [:]
            for (id, at) in core.lastSeen where (saved[id] ?? 0) < at { changed[id] = at }
            guard !changed.isEmpty else { return 0 }
            try database.recordSeen(changed)
            saved.merge(changed) { _, new in new }
            return changed.count
        }
    }

    /// Saves every `interval` until the task is cancelled, then once more.
    public func run() async {
        var next = clock.now.advanced(by: interval)
        while true {
            do {
                try await clock.sleep(until: next, tolerance: nil)
            } catch {
                break
            }
            saveLogging()
            // A late wake-up (a suspended machine) skips the missed ticks rather than saving in a burst.
            let now = clock.now
            next = next.advanced(by: interval)
            if next <= now { next = now.advanced(by: interval) }
        }
        saveLogging()
    }

    func saveLogging() {
        do {
            try save()
        } catch {
            logger.error("could not save when devices were last seen: \(error.message)")
        }
    }
}
