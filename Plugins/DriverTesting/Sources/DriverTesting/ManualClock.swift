import Synchronization

/// A clock that moves only when a test advances it, so debounce, long-press and timeout logic
/// can be tested exactly and without sleeping.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, Hashable, Sendable {
        public let offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    struct Sleeper {
        let id: Int
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
        var sleepersChanged: [CheckedContinuation<Void, Never>] = []
    }

    let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let (resumeNow, waiters): (Bool?, [CheckedContinuation<Void, Never>]) = state.withLock { s in
                    // Cancelled before the sleeper is listed: `onCancel` has run (or runs now,
                    // waiting for this lock) and found nothing to resume, so end the sleep here;
                    // a sleeper listed after its cancellation would sleep forever.
                    if Task.isCancelled { return (nil, []) }
                    if deadline <= s.now { return (true, []) }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: c))
                    let w = s.sleepersChanged
                    s.sleepersChanged = []
                    return (false, w)
                }
                for w in waiters { w.resume() }
                switch resumeNow {
                case nil: c.resume(throwing: CancellationError())
                case true?: c.resume()
                case false?: break
                }
            }
        } onCancel: {
            let sleeper = state.withLock { s -> Sleeper? in
                guard let i = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: i)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward, waking every sleeper whose deadline has come, in deadline order.
    public func advance(by duration: Duration) {
        let due: [Sleeper] = state.withLock { s in
            s.now = s.now.advanced(by: duration)
            let now = s.now
            let due = s.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            s.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for s in due { s.continuation.resume() }
    }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Waits until at least `count` tasks sleep on this clock (so an `advance` will reach them).
    public func waitForSleepers(_ count: Int = 1) async {
        while state.withLock({ $0.sleepers.count < count }) {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let enough = state.withLock { s -> Bool in
                    if s.sleepers.count >= count { return true }
                    s.sleepersChanged.append(c)
                    return false
                }
                if enough { c.resume() }
            }
        }
    }
}
