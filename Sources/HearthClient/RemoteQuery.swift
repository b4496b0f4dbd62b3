import Foundation
import HearthAPI
public import HomeModel

/// One change a remote `stream()` delivers.
public enum RemoteChange<Element: Sendable>: Sendable {
    /// The whole set: first, and again whenever this client fell behind (a resync).
    case snapshot([Element], version: UInt64)
    case added(Element)
    case updated(Element)
    /// The removed element's ID, as text (`demo:lamp`, `room-1a2b`).
    case removed(String)
}

/// A query over devices, rooms or structures on hearthd (the remote twin of HomeCore's `Query`).
public struct RemoteQuery<Element: Sendable>: Sendable {
    let home: Home
    let path: String
    /// The subscription for a mode (`SubscriptionQuery.devices`).
    let query: @Sendable (SubscriptionMode) -> SubscriptionQuery
    let set: @Sendable (SetSnapshot) -> [Element]
    let element: @Sendable (SetElement) -> Element?
    let decode: @Sendable (Data) throws -> [Element]

    init(
        home: Home, path: String, query: @escaping @Sendable (SubscriptionMode) -> SubscriptionQuery,
        set: @escaping @Sendable (SetSnapshot) -> [Element], element: @escaping @Sendable (SetElement) -> Element?,
        decode: @escaping @Sendable (Data) throws -> [Element]
    ) {
        self.home = home
        self.path = path
        self.query = query
        self.set = set
        self.element = element
        self.decode = decode
    }

    /// The current set.
    public func list() async throws(HomeError) -> [Element] {
        let (data, _) = try await home.connection.raw("GET", path, body: nil as String?)
        do {
            return try decode(data)
        } catch {
            throw .internal("the server's \(path) could not be read: \(error)")
        }
    }

    /// The whole set now and again on every change (only the newest if the consumer is slow).
    /// Ends when the session is revoked (``RemoteUpdates/failure`` is then `permissionDenied`)
    /// or the connection closes.
    public func batched() -> RemoteUpdates<[Element]> {
        let messages = WebSocketFeed.messages(
            home.connection, subscribe: .subscribe(id: path, query(.batched)), buffer: 1)
        let set = self.set
        return RemoteUpdates(AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                for await m in messages {
                    guard case .snapshot(_, _, let snapshot) = m else { break }
                    continuation.yield(set(snapshot))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }, ending: home.ending)
    }

    /// The whole set now (as `.snapshot`), then only what changes.
    public func stream() -> RemoteUpdates<RemoteChange<Element>> {
        let messages = WebSocketFeed.messages(
            home.connection, subscribe: .subscribe(id: path, query(.stream)), buffer: 4096)
        let set = self.set
        let element = self.element
        return RemoteUpdates(AsyncStream { continuation in
            let task = Task {
                loop: for await m in messages {
                    switch m {
                    case .snapshot(_, let version, let snapshot): continuation.yield(.snapshot(set(snapshot), version: version))
                    case .added(_, let e): if let e = element(e) { continuation.yield(.added(e)) }
                    case .updated(_, let e): if let e = element(e) { continuation.yield(.updated(e)) }
                    case .removed(_, let key): continuation.yield(.removed(key))
                    default: break loop
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }, ending: home.ending)
    }
}
