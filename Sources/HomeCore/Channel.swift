import CoreMetrics
public import HomeModel
import DequeModule
import Synchronization

/// One subscriber's own buffer between the core (many producers) and one consumer.
///
/// `latest` keeps only the newest element (``Query/batched()``); `bounded` keeps up to `n`
/// in order and, when a slow consumer lets it overflow, drops them and hands the consumer a
/// fresh snapshot instead (``Query/stream()``). Elements carry the core's version: anything
/// not newer than what the consumer already has is ignored, which makes subscribing race-free.
/// Nothing here is resumed while a lock is held.
final class Channel<Element: Sendable>: Sendable {
    enum Policy: Sendable {
        case latest
        case bounded(Int)
        /// Bounded, and on overflow the oldest elements are dropped and counted (events).
        case droppingOldest(Int)
    }

    struct State: ReaderState {
        var buffer: Deque<Element> = []
        var waiter: Waiter?
        var finished = false
        var needsResync = false
        /// The newest version the consumer has or will get; nil before anything was pushed.
        var floor: UInt64?
        var hasNews: Bool { needsResync || !buffer.isEmpty }
    }

    let policy: Policy
    let state = Mutex(State())
    /// Builds a snapshot for a resync; called by the consumer. It must call ``markResynced(at:)``
    /// while it holds the core's lock.
    let resync: (@Sendable () -> Element?)?
    let onTerminate: @Sendable () -> Void
    /// Counts overflows: resyncs of a `bounded` channel, dropped events of a `droppingOldest` one.
    let metrics: HomeMetrics?

    init(
        policy: Policy, resync: (@Sendable () -> Element?)? = nil, metrics: HomeMetrics? = nil,
        onTerminate: @escaping @Sendable () -> Void = {}
    ) {
        self.policy = policy
        self.resync = resync
        self.metrics = metrics
        self.onTerminate = onTerminate
    }

    /// Offers an element at `version`. Never blocks.
    func push(_ element: Element, version: UInt64) {
        var overflowed = false
        let waiter: Waiter? = state.withLock { s in
            guard !s.finished else { return nil }
            switch policy {
            case .latest:
                // Only a newer version replaces what the consumer has not read yet.
                guard s.floor.map({ version > $0 }) ?? true else { return nil }
                s.buffer.removeAll(keepingCapacity: true)
                s.buffer.append(element)
                s.floor = version
            case .bounded(let limit):
                // Diffs already covered by the last snapshot are dropped; several diffs of one
                // change share its version.
                guard s.floor.map({ version > $0 }) ?? true, !s.needsResync else { return nil }
                if s.buffer.count >= limit {
                    s.buffer.removeAll()
                    s.needsResync = true
                    overflowed = true
                } else {
                    s.buffer.append(element)
                }
            case .droppingOldest(let limit):
                if s.buffer.count >= limit {
                    s.buffer.removeFirst()
                    overflowed = true
                }
                s.buffer.append(element)
            }
            return s.takeWaiter()
        }
        if overflowed, let metrics {
            if case .bounded = policy { metrics.resyncs.increment() } else { metrics.droppedEvents.increment() }
        }
        waiter?.resume()
    }

    /// Records that the consumer now holds everything up to `version`.
    func markResynced(at version: UInt64) {
        state.withLock { s in
            s.needsResync = false
            s.buffer.removeAll()
            s.floor = max(s.floor ?? 0, version)
        }
    }

    /// Asks the consumer to take a fresh snapshot at its next read.
    func requestResync() {
        let waiter: Waiter? = state.withLock { s in
            s.needsResync = true
            s.buffer.removeAll()
            return s.takeWaiter()
        }
        waiter?.resume()
    }

    /// Ends the subscription: the consumer gets what is buffered, then nil.
    func finish() {
        let (waiter, wasFinished) = state.withLock { $0.markFinished() }
        waiter?.resume()
        if !wasFinished { onTerminate() }
    }

    /// Ends the subscription at once, dropping what is buffered.
    func cancel() {
        state.withLock { $0.buffer.removeAll() }
        finish()
    }


    enum Step { case element(Element), resync, end, wait }

    /// The next element; nil once finished. One consumer at a time.
    func next() async -> Element? {
        while true {
            let step: Step = state.withLock { s in
                if s.finished && s.buffer.isEmpty { return .end }
                if s.needsResync && !s.finished { return .resync }
                if let e = s.buffer.popFirst() { return .element(e) }
                return .wait
            }
            switch step {
            case .element(let e): return e
            case .end: return nil
            case .resync:
                if let snapshot = resync?() { return snapshot }
                state.withLock { $0.needsResync = false }
            case .wait:
                if Task.isCancelled {
                    cancel()
                    return nil
                }
                await parkReader({ c in state.withLock { $0.park(c) } }, onCancel: { self.cancel() })
            }
        }
    }
}

/// A parked reader. Unchecked (no canary object allocated per wait, on the fan-out's path):
/// it is only ever stored and taken under its buffer's lock, so it is resumed exactly once.
typealias Waiter = UnsafeContinuation<Void, Never>

/// The reader's side of a subscriber's buffer state: one waiting reader, and an end.
protocol ReaderState {
    var waiter: Waiter? { get set }
    var finished: Bool { get set }
    /// Whether the reader has something to take.
    var hasNews: Bool { get }
}

extension ReaderState {
    /// The waiting reader, if any, to resume once the lock is released.
    mutating func takeWaiter() -> Waiter? {
        defer { waiter = nil }
        return waiter
    }

    /// Marks the end; returns the reader to resume and whether it had already ended.
    mutating func markFinished() -> (waiter: Waiter?, wasFinished: Bool) {
        let was = finished
        finished = true
        return (takeWaiter(), was)
    }

    /// Keeps `c` as the waiting reader, or returns true when it may go on at once.
    mutating func park(_ c: Waiter) -> Bool {
        if finished || hasNews { return true }
        waiter = c
        return false
    }
}

/// Suspends the reader until `park` (which holds the buffer's lock) keeps it and a producer
/// resumes it, or at once when `park` says it may go on; cancelling the task runs `onCancel`.
func parkReader(
    _ park: (Waiter) -> Bool, onCancel: @Sendable () -> Void
) async {
    await withTaskCancellationHandler {
        await withUnsafeContinuation { (c: Waiter) in
            if park(c) { c.resume() }
        }
    } onCancel: {
        onCancel()
    }
}

/// What a subscription reads from: one subscriber's own buffer (``Channel`` or ``DeviceFeed``).
protocol UpdateSource<Element>: Sendable {
    associatedtype Element: Sendable
    /// The next element; nil once finished. One consumer at a time.
    func next() async -> Element?
    /// Ends the subscription at once, dropping what is buffered.
    func cancel()
}

extension Channel: UpdateSource {}

/// A subscription: an `AsyncSequence` of one subscriber's updates. Dropping the last iterator
/// or cancelling the consuming task ends it and frees its buffer.
///
/// `for await` simply ends; ``failure`` then says why (`permissionDenied` when the session was
/// revoked), and ``throwing()`` is the same subscription ending with that error thrown.
public struct Updates<Element: Sendable>: AsyncSequence, Sendable {
    let token: SubscriptionToken<Element>
    let ending: @Sendable () -> HomeError?

    init(_ source: some UpdateSource<Element>, ending: @escaping @Sendable () -> HomeError? = { nil }) {
        self.token = SubscriptionToken(source)
        self.ending = ending
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let token: SubscriptionToken<Element>
        public mutating func next() async -> Element? { await token.source.next() }
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await token.source.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(token: token) }

    /// Ends the subscription now.
    public func cancel() { token.source.cancel() }

    /// Why the subscription ended, once it has: `permissionDenied` when the session's access
    /// was revoked; nil for a normal end (the device was removed, the core shut down).
    public var failure: HomeError? { ending() }

    /// The same subscription as a sequence that throws ``failure`` instead of ending quietly:
    /// `for try await set in home.devices().batched().throwing() { … }`.
    public func throwing() -> ThrowingUpdates<Element> { ThrowingUpdates(base: self) }
}

/// ``Updates`` that throws why it ended (`permissionDenied` after a revocation).
public struct ThrowingUpdates<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = HomeError
    let base: Updates<Element>

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Failure = HomeError
        var base: Updates<Element>.AsyncIterator
        let ending: @Sendable () -> HomeError?

        public mutating func next() async throws(HomeError) -> Element? {
            if let e = await base.next() { return e }
            if let failure = ending() { throw failure }
            return nil
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(HomeError) -> Element? {
            if let e = await base.next(isolation: actor) { return e }
            if let failure = ending() { throw failure }
            return nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), ending: base.ending) }
}

/// Owns a subscriber's buffer; when the last copy of a subscription goes away, the buffer is
/// finished and unregistered from the core.
final class SubscriptionToken<Element: Sendable>: Sendable {
    let source: any UpdateSource<Element>
    init(_ source: some UpdateSource<Element>) { self.source = source }
    deinit { source.cancel() }
}
