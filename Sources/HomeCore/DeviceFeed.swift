public import HomeModel
import Synchronization

/// What one read of ``Home/changedDevices()`` gives: every visible commissioned device whose
/// state changed since the previous read, each once and in its newest state.
public struct ChangedDevices: Sendable {
    /// The core's version the newest of these states belongs to.
    public let version: UInt64
    /// Sorted by ID.
    public let devices: [HomeDevice]
}

/// One subscriber's buffer for ``Home/changedDevices()``: at most one pending state per device,
/// keyed by ID, so a slow reader costs at most one entry per device however many reports it
/// misses, and gets each changed device once with its newest state.
///
/// Changes are recorded while the core's lock is held (so they arrive in version order and a
/// newer state can never be overwritten by an older one); the reader is resumed afterwards.
///
/// A feed made with `notify` has no awaiting reader: it calls `notify` (after the core's lock
/// is released) when news arrive and the reader has not been told yet, and the reader takes
/// with ``poll()`` whenever it is ready (``Home/polledChangedDevices(notify:)``).
final class DeviceFeed: UpdateSource {
    struct State: ReaderState {
        var pending: [DeviceID: HomeDevice] = [:]
        var version: UInt64 = 0
        var waiter: Waiter?
        var finished = false
        /// A polling reader was told of news it has not polled yet.
        var notified = false
        var hasNews: Bool { !pending.isEmpty }

        /// Everything pending, sorted by ID, and the buffer emptied; nil when nothing is.
        mutating func take() -> ChangedDevices? {
            guard !pending.isEmpty else { return nil }
            // Sorted as (key, value) pairs: the comparison reads the keys in place (through the
            // devices it retained and released both IDs on every one of its n log n steps).
            let devices = pending.sorted { $0.key.rawValue < $1.key.rawValue }.map(\.value)
            pending.removeAll(keepingCapacity: true)
            return ChangedDevices(version: version, devices: devices)
        }
    }

    let state = Mutex(State())
    let onTerminate: @Sendable () -> Void
    let notify: (@Sendable () -> Void)?

    init(notify: (@Sendable () -> Void)? = nil, onTerminate: @escaping @Sendable () -> Void) {
        self.notify = notify
        self.onTerminate = onTerminate
    }

    /// Records new states and forgets devices that are gone or hidden (``Home/devices()``
    /// reports those). Call with the core's lock held; returns whether ``wake()`` is needed.
    func record(_ changed: [HomeDevice], gone: [DeviceID], version: UInt64) -> Bool {
        state.withLock { s in
            guard !s.finished else { return false }
            for id in gone { s.pending[id] = nil }
            for d in changed { s.pending[d.id] = d }
            s.version = max(s.version, version)
            guard !changed.isEmpty else { return false }
            if notify != nil {
                defer { s.notified = true }
                return !s.notified
            }
            return s.waiter != nil
        }
    }

    /// Resumes a waiting reader, or tells a polling one.
    func wake() {
        if let notify { return notify() }
        state.withLock { $0.takeWaiter() }?.resume()
    }

    /// Ends the subscription: the reader gets what is pending, then nil.
    func finish() {
        let (waiter, wasFinished) = state.withLock { $0.markFinished() }
        waiter?.resume()
        if !wasFinished {
            notify?()
            onTerminate()
        }
    }

    /// What a polling reader takes: the pending changes (the next news are told again), none
    /// (told again on news), or the end.
    func poll() -> PolledChangedDevices.Poll {
        state.withLock { s in
            s.notified = false
            if let changes = s.take() { return .changes(changes) }
            return s.finished ? .finished : .none
        }
    }

    func cancel() {
        state.withLock { $0.pending.removeAll() }
        finish()
    }

    func next() async -> ChangedDevices? {
        while true {
            let taken: ChangedDevices?? = state.withLock { s in
                if let changes = s.take() { return .some(changes) }
                return s.finished ? .some(nil) : nil
            }
            if let taken { return taken }
            if Task.isCancelled {
                cancel()
                return nil
            }
            await parkReader({ c in state.withLock { $0.park(c) } }, onCancel: { self.cancel() })
        }
    }
}

/// ``Home/changedDevices()`` for a reader that is told instead of awaiting: a network event
/// loop that writes the changes itself, with no task woken per change. `notify` is called on
/// the thread that made the change (keep it short: schedule the read), at most once until
/// the next ``poll()``, and once more when the subscription ends.
public final class PolledChangedDevices: Sendable {
    public enum Poll: Sendable {
        /// Every visible device changed since the previous poll, each once in its newest state
        /// (the first poll: every visible device).
        case changes(ChangedDevices)
        /// Nothing new; `notify` is called when there is.
        case none
        /// The subscription ended (``failure`` says why).
        case finished
    }

    let feed: DeviceFeed
    let ending: @Sendable () -> HomeError?

    init(_ feed: DeviceFeed, ending: @escaping @Sendable () -> HomeError?) {
        self.feed = feed
        self.ending = ending
    }

    deinit { feed.cancel() }

    /// Takes what changed; never waits.
    public func poll() -> Poll { feed.poll() }

    /// Ends the subscription now (`notify` is called once more).
    public func cancel() { feed.cancel() }

    /// Why the subscription ended, once it has: `permissionDenied` after a revocation.
    public var failure: HomeError? { ending() }
}
