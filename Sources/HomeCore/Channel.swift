import CoreMetrics
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

    struct State {
        var buffer: Deque<Element> = []
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
        var needsResync = false
        /// The newest version the consumer has or will get; nil before anything was pushed.
        var floor: UInt64?
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
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { s in
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
            let w = s.waiter
            s.waiter = nil
            return w
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
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { s in
            s.needsResync = true
            s.buffer.removeAll()
            let w = s.waiter
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// Ends the subscription: the consumer gets what is buffered, then nil.
    func finish() {
        let (waiter, wasFinished): (CheckedContinuation<Void, Never>?, Bool) = state.withLock { s in
            let was = s.finished
            s.finished = true
            let w = s.waiter
            s.waiter = nil
            return (w, was)
        }
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
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                        let ready = state.withLock { s -> Bool in
                            if s.finished || s.needsResync || !s.buffer.isEmpty { return true }
                            s.waiter = c
                            return false
                        }
                        if ready { c.resume() }
                    }
                } onCancel: {
                    self.cancel()
                }
            }
        }
    }
}

/// A subscription: an `AsyncSequence` of one subscriber's updates. Dropping the last iterator
/// or cancelling the consuming task ends it and frees its buffer.
public struct Updates<Element: Sendable>: AsyncSequence, Sendable {
    let token: SubscriptionToken<Element>

    init(_ channel: Channel<Element>) { self.token = SubscriptionToken(channel) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let token: SubscriptionToken<Element>
        public mutating func next() async -> Element? { await token.channel.next() }
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await token.channel.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(token: token) }

    /// Ends the subscription now.
    public func cancel() { token.channel.cancel() }
}

/// Owns a channel; when the last copy of a subscription goes away, the channel is finished
/// and unregistered from the core.
final class SubscriptionToken<Element: Sendable>: Sendable {
    let channel: Channel<Element>
    init(_ channel: Channel<Element>) { self.channel = channel }
    deinit { channel.cancel() }
}
