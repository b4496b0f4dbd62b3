import HomeCombine
import HomeModel
import OpenCombine
import Testing

/// ``AsyncSequencePublisher`` under demand a subscriber controls.
@Suite(.timeLimit(.minutes(1))) struct AsyncSequencePublisherTests {
    /// A subscriber that asks for one element at a time when told to, and reports what it gets.
    // `subscription` is set once, synchronously inside `subscribe(_:)`, before the test reads
    // it; everything else is immutable or a stream continuation.
    final class Probe: Subscriber, @unchecked Sendable {
        typealias Input = Int
        typealias Failure = HomeError
        var subscription: (any Subscription)?
        let events: AsyncStream<String>
        let sink: AsyncStream<String>.Continuation
        let combineIdentifier = CombineIdentifier()

        init() { (events, sink) = AsyncStream<String>.makeStream() }

        func receive(subscription: any Subscription) {
            self.subscription = subscription
            sink.yield("subscribed")
        }
        func receive(_ input: Int) -> Subscribers.Demand {
            sink.yield("value \(input)")
            return .none
        }
        func receive(completion: Subscribers.Completion<HomeError>) {
            switch completion {
            case .finished: sink.yield("finished")
            case .failure(let e): sink.yield("failure \(e.code)")
            }
        }
        func request(_ n: Int) { subscription?.request(.max(n)) }
    }

    @Test func pendingValueAndCompletion_waitForDemand_thenBothArrive() async {
        let (values, source) = AsyncStream<Int>.makeStream()
        let probe = Probe()
        AsyncSequencePublisher(values).subscribe(probe)
        var events = probe.events.makeAsyncIterator()
        #expect(await events.next() == "subscribed")
        probe.request(1)
        source.yield(1)
        #expect(await events.next() == "value 1")
        // No demand now: 2 waits, and the end waits behind it.
        source.yield(2)
        source.finish()
        probe.request(1)
        #expect(await events.next() == "value 2")
        #expect(await events.next() == "finished", "the completion follows the pending value, with no further demand needed")
    }

    @Test func completion_carriesWhyTheSequenceEnded() async {
        let (values, source) = AsyncStream<Int>.makeStream()
        let probe = Probe()
        AsyncSequencePublisher(values, failure: { .permissionDenied("revoked") }).subscribe(probe)
        var events = probe.events.makeAsyncIterator()
        #expect(await events.next() == "subscribed")
        probe.request(1)
        source.finish()
        #expect(await events.next() == "failure permissionDenied")
    }
}
