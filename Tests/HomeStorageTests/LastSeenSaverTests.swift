import DriverAPI
import DriverTesting
import Foundation
import GRDB
import HomeCore
import HashTreeCollections
import HomeModel
@testable import HomeStorage
import Testing

/// Last-seen times are saved every interval (and at shutdown), only those that moved.
@Suite struct LastSeenSaverTests {
    static let relay = DeviceID(plugin: "gpio", local: "relay")
    static let door = DeviceID(plugin: "gpio", local: "door")

    /// The last-seen time in the file, read through a new connection (as after a power cut).
    static func savedLastSeen(_ path: String, _ id: DeviceID) throws -> UInt64? {
        try HearthDatabase(path: path).registryEntry(id)?.lastSeen
    }

    /// Rows SQLite changed through the database's one writer connection so far.
    static func rowsWritten(_ db: HearthDatabase) throws -> Int {
        try db.pool.write { $0.totalChangesCount }
    }

    static func reportDoor(_ h: Harness, open: Bool) {
        h.context().report("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(open))
    }

    /// A core over a real file with a relay and a door (seen at 1 000), and a saver running
    /// every 60 s on a manual clock, asleep until its first tick.
    struct Running {
        let dir = TempDir()
        let now = Harness.Clock()
        let clock = ManualClock()
        let h: Harness
        let saver: LastSeenSaver<ManualClock>
        let task: Task<Void, Never>
        var path: String { h.path }

        init() async throws {
            h = try Harness(path: dir.path("hearth.sqlite"), clock: now)
            h.context().publish(Harness.relay())
            h.context().publish(Harness.door())
            // Written now: the tests read the file through a connection of their own, which
            // does not see the rows a plugin's publish queued (DriverRowBatch, up to 50 ms).
            try h.db.flushDriverRows()
            saver = LastSeenSaver(core: h.core, database: h.db, interval: .seconds(60), clock: clock)
            let saver = saver
            task = Task { await saver.run() }
            await clock.waitForSleepers(1)
        }

        /// Cancels the saver, as hearthd does at graceful shutdown, and waits for it to end.
        func stop() async {
            task.cancel()
            await task.value
        }
    }

    @Test func everyInterval_onlyTheTimesThatMovedAreWritten() async throws {
        let r = try await Running()
        let (h, now, clock, path) = (r.h, r.now, r.clock, r.path)

        // A sensor report moves last-seen in memory only.
        now.advance(5_000)
        Self.reportDoor(h, open: false)
        #expect(h.core.lastSeen[Self.door] == 6_000)
        #expect(try Self.savedLastSeen(path, Self.door) == 1_000)

        // Not before the interval…
        clock.advance(by: .seconds(59))
        #expect(clock.sleeperCount == 1)
        #expect(try Self.savedLastSeen(path, Self.door) == 1_000)
        // …and at it, saved; the saver sleeps again once the save is done.
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(try Self.savedLastSeen(path, Self.door) == 6_000)
        #expect(try Self.savedLastSeen(path, Self.relay) == 1_000)

        // Nothing moved: the file is not touched.
        let before = try Self.rowsWritten(h.db)
        clock.advance(by: .seconds(60))
        await clock.waitForSleepers(1)
        #expect(try Self.rowsWritten(h.db) == before)

        // One device moved: one row written, not both.
        now.advance(1_000)
        Self.reportDoor(h, open: true)
        clock.advance(by: .seconds(60))
        await clock.waitForSleepers(1)
        #expect(try Self.rowsWritten(h.db) == before + 1)
        #expect(try Self.savedLastSeen(path, Self.door) == 7_000)
        await r.stop()
    }

    @Test func shutdown_savesWhatMovedSinceTheLastTick() async throws {
        let r = try await Running()
        let (h, now, saver, path) = (r.h, r.now, r.saver, r.path)
        now.advance(2_000)
        Self.reportDoor(h, open: false)
        // Stopping (hearthd cancels it at graceful shutdown) saves before the interval is up.
        await r.stop()
        #expect(try Self.savedLastSeen(path, Self.door) == 3_000)

        // hearthd saves once more after every service stopped: only what moved since.
        #expect(try saver.save() == 0)
        now.advance(1_000)
        Self.reportDoor(h, open: true)
        #expect(try saver.save() == 1)
        #expect(try Self.savedLastSeen(path, Self.door) == 4_000)
    }
}
