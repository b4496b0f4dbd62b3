public import HomeModel

/// A subscription over the network: an `AsyncSequence` that ends when the subscription does.
///
/// `for await` simply ends; ``failure`` then says why (`permissionDenied` when hearthd revoked
/// the session), and ``throwing()`` is the same subscription ending with that error thrown —
/// the same shape as HomeCore's in-process `Updates`.
public struct RemoteUpdates<Element: Sendable>: AsyncSequence, Sendable {
    let stream: AsyncStream<Element>
    let ending: @Sendable () -> HomeError?

    init(_ stream: AsyncStream<Element>, ending: @escaping @Sendable () -> HomeError?) {
        self.stream = stream
        self.ending = ending
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.AsyncIterator
        public mutating func next() async -> Element? { await base.next() }
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? { await base.next(isolation: actor) }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }

    /// Why the subscription ended, once it has: `permissionDenied` when the session's access was
    /// revoked; nil for a normal end (the device was removed, the server shut down).
    public var failure: HomeError? { ending() }

    /// The same subscription as a sequence that throws ``failure`` instead of ending quietly.
    public func throwing() -> ThrowingRemoteUpdates<Element> { ThrowingRemoteUpdates(base: self) }
}

/// ``RemoteUpdates`` that throws why it ended (`permissionDenied` after a revocation).
public struct ThrowingRemoteUpdates<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = HomeError
    let base: RemoteUpdates<Element>

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Failure = HomeError
        var base: RemoteUpdates<Element>.AsyncIterator
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
