public import OpenCombine
public import HomeModel
import Foundation

/// A Combine publisher over an `AsyncSequence` of home updates (a subscription's `Updates`, a
/// remote query's sequence, or an `AsyncStream`): subscribing starts the sequence, cancelling
/// ends it.
///
/// Demand is honoured: while the subscriber asks for nothing, the newest element waits and
/// replaces older ones (updates are snapshots, so the newest is the one that matters). When the
/// sequence ends, the waiting element is delivered first (once demand allows), then the
/// completion: `.failure(permissionDenied)` when the session was revoked (what `failure` says
/// at the end, or what the sequence threw), `.finished` otherwise.
public struct AsyncSequencePublisher<Base: AsyncSequence & Sendable>: Publisher where Base.Element: Sendable {
    public typealias Output = Base.Element
    public typealias Failure = HomeError

    let base: Base
    let failure: @Sendable () -> HomeError?

    /// - Parameters:
    ///   - failure: asked once the sequence has ended: why, or nil for a normal end.
    public init(_ base: Base, failure: @escaping @Sendable () -> HomeError? = { nil }) {
        self.base = base
        self.failure = failure
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == HomeError {
        let subscription = AsyncSequenceSubscription(base: base, failure: failure, subscriber: AnySubscriber(subscriber))
        subscriber.receive(subscription: subscription)
    }
}

/// The subscription behind ``AsyncSequencePublisher``.
///
/// Every change (a value from the sequence, its end, new demand) goes through ``drain()``: one
/// caller at a time delivers, outside the lock, so the subscriber is never called concurrently.
final class AsyncSequenceSubscription<Base: AsyncSequence & Sendable>: Subscription, @unchecked Sendable
where Base.Element: Sendable {
    typealias S = AnySubscriber<Base.Element, HomeError>

    // All mutable state is guarded by `lock`; the subscriber is called outside the lock.
    struct State {
        var subscriber: S?
        var demand: Subscribers.Demand = .none
        /// The newest element the subscriber has not asked for yet.
        var pending: Base.Element?
        /// The sequence's end, delivered once nothing is pending.
        var completion: Subscribers.Completion<HomeError>?
        var task: Task<Void, Never>?
        /// Someone is calling the subscriber now.
        var delivering = false
    }

    enum Delivery {
        case value(S, Base.Element)
        case completion(S, Subscribers.Completion<HomeError>)
    }

    let base: Base
    let failure: @Sendable () -> HomeError?
    let lock = NSLock()
    var unsafeState: State

    init(base: Base, failure: @escaping @Sendable () -> HomeError?, subscriber: S) {
        self.base = base
        self.failure = failure
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
        withState { s in
            s.demand += demand
            if s.task == nil, s.subscriber != nil { s.task = Task { [weak self] in await self?.pump() } }
        }
        drain()
    }

    func cancel() {
        let task = withState { s -> Task<Void, Never>? in
            s.subscriber = nil
            s.pending = nil
            return s.task
        }
        task?.cancel()
    }

    func pump() async {
        var iterator = base.makeAsyncIterator()
        var thrown: HomeError?
        while true {
            let value: Base.Element?
            do {
                value = try await iterator.next()
            } catch {
                thrown = (error as? HomeError) ?? .internal("the subscription failed: \(error)")
                break
            }
            guard let value else { break }
            let live = withState { s -> Bool in
                guard s.subscriber != nil else { return false }
                s.pending = value
                return true
            }
            guard live else { return }
            drain()
            if Task.isCancelled { return }
        }
        let completion: Subscribers.Completion<HomeError>
        if let reason = thrown ?? failure() { completion = .failure(reason) } else { completion = .finished }
        withState { $0.completion = completion }
        drain()
    }

    /// Delivers what the subscriber may have now: the pending value under demand, then the
    /// completion once nothing is pending. Returns when there is nothing to deliver, or when
    /// another caller is delivering (it looks again before it stops).
    func drain() {
        while true {
            let next = withState { s -> Delivery? in
                guard !s.delivering, let sub = s.subscriber else { return nil }
                if s.demand > 0, let value = s.pending {
                    s.pending = nil
                    s.demand -= 1
                    s.delivering = true
                    return .value(sub, value)
                }
                if s.pending == nil, let completion = s.completion {
                    s.subscriber = nil
                    return .completion(sub, completion)
                }
                return nil
            }
            switch next {
            case .value(let sub, let value):
                let more = sub.receive(value)
                withState { s in
                    s.demand += more
                    s.delivering = false
                }
            case .completion(let sub, let completion):
                sub.receive(completion: completion)
                return
            case nil:
                return
            }
        }
    }
}

extension Publisher where Failure == HomeError {
    /// Seed-style `.sink { value in … }` on a home publisher: values go to `receiveValue`; the
    /// end is ignored. To learn that a session was revoked, use
    /// `sink(receiveCompletion:receiveValue:)` (`.failure(permissionDenied)`) or `.catch`.
    public func sink(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
        sink(receiveCompletion: { _ in }, receiveValue: receiveValue)
    }
}
