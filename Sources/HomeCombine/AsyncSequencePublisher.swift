public import OpenCombine
import Foundation

/// A Combine publisher over an `AsyncSequence` of home updates (a subscription's `Updates`, or
/// an `AsyncStream`): subscribing starts the sequence, cancelling ends it.
///
/// Demand is honoured: while the subscriber asks for nothing, the newest element waits and
/// replaces older ones (updates are snapshots, so the newest is the one that matters).
public struct AsyncSequencePublisher<Base: AsyncSequence & Sendable>: Publisher where Base.Element: Sendable {
    public typealias Output = Base.Element
    public typealias Failure = Never

    let base: Base

    public init(_ base: Base) { self.base = base }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        let subscription = AsyncSequenceSubscription(base: base, subscriber: AnySubscriber(subscriber))
        subscriber.receive(subscription: subscription)
    }
}

/// The subscription behind ``AsyncSequencePublisher``.
final class AsyncSequenceSubscription<Base: AsyncSequence & Sendable>: Subscription, @unchecked Sendable
where Base.Element: Sendable {
    typealias S = AnySubscriber<Base.Element, Never>

    // All mutable state is guarded by `lock`; the subscriber is called outside the lock.
    struct State {
        var subscriber: S?
        var demand: Subscribers.Demand = .none
        var pending: Base.Element?
        var task: Task<Void, Never>?
        var finished = false
    }

    let base: Base
    let lock = NSLock()
    var unsafeState: State

    init(base: Base, subscriber: S) {
        self.base = base
        self.unsafeState = State(subscriber: subscriber)
    }

    /// Runs `body` with the state while holding the lock.
    func withState<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&unsafeState)
    }

    let combineIdentifier = CombineIdentifier()

    func request(_ demand: Subscribers.Demand) {
        let (start, deliver) = withState { s -> (Bool, (S, Base.Element)?) in
            s.demand += demand
            let start = s.task == nil && !s.finished && s.subscriber != nil
            if start { s.task = Task { [weak self] in await self?.pump() } }
            if s.demand > 0, let p = s.pending, let sub = s.subscriber {
                s.pending = nil
                s.demand -= 1
                return (start, (sub, p))
            }
            return (start, nil)
        }
        _ = start
        if let (sub, value) = deliver { deliverValue(sub, value) }
    }

    func cancel() {
        let task = withState { s -> Task<Void, Never>? in
            s.subscriber = nil
            s.finished = true
            return s.task
        }
        task?.cancel()
    }

    func pump() async {
        var iterator = base.makeAsyncIterator()
        while let value = try? await iterator.next() {
            let deliver = withState { s -> S? in
                guard let sub = s.subscriber else { return nil }
                if s.demand > 0 {
                    s.demand -= 1
                    return sub
                }
                s.pending = value
                return nil
            }
            if let sub = deliver { deliverValue(sub, value) }
            if Task.isCancelled { return }
        }
        let sub = withState { s -> S? in
            s.finished = true
            defer { s.subscriber = nil }
            return s.pending == nil ? s.subscriber : nil
        }
        sub?.receive(completion: .finished)
    }

    func deliverValue(_ subscriber: S, _ value: Base.Element) {
        let more = subscriber.receive(value)
        if more > 0 { withState { $0.demand += more } }
    }
}
