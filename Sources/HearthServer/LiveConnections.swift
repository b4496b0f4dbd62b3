import Foundation
import HearthAPI
import HomeModel
import Synchronization

/// Open WebSockets by session, so revoking a token closes its sockets at once and a changed
/// grant reaches them.
final class LiveSockets: Sendable {
    /// What a socket hears about its session.
    enum Signal: Sendable {
        /// Close with this reason (the token was revoked).
        case close(HomeError)
        /// The grant's new scope.
        case grantUpdated(WireScope)
    }

    let sockets = Mutex<[String: [UUID: AsyncStream<Signal>.Continuation]]>([:])

    /// Registers a socket; the stream yields when its grant changes and once, last, when its
    /// session is revoked.
    func register(session: String, id: UUID) -> AsyncStream<Signal> {
        let (stream, continuation) = AsyncStream<Signal>.makeStream(bufferingPolicy: .bufferingNewest(4))
        sockets.withLock { $0[session, default: [:]][id] = continuation }
        return stream
    }

    /// Tells every socket of the session its grant's new scope.
    func grantUpdated(session: String, scope: WireScope) {
        let continuations = sockets.withLock { $0[session].map { Array($0.values) } ?? [] }
        for c in continuations { c.yield(.grantUpdated(scope)) }
    }

    func unregister(session: String, id: UUID) {
        let c = sockets.withLock { s -> AsyncStream<Signal>.Continuation? in
            let c = s[session]?.removeValue(forKey: id)
            if s[session]?.isEmpty == true { s[session] = nil }
            return c
        }
        c?.finish()
    }

    /// Tells every socket of the session to close with `reason`.
    func close(session: String, reason: HomeError) {
        let continuations = sockets.withLock { $0.removeValue(forKey: session).map { Array($0.values) } ?? [] }
        for c in continuations {
            c.yield(.close(reason))
            c.finish()
        }
    }

    var count: Int { sockets.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// Apps waiting (long poll) for an admin's decision on their request.
final class ConsentWaiters: Sendable {
    let waiters = Mutex<[String: [UUID: AsyncStream<Void>.Continuation]]>([:])

    /// Waits until ``notify(_:)`` for the request or until `timeout`, whichever is first.
    /// Register-then-check: call `check` after registering so no decision slips between.
    func wait(for requestID: String, timeout: Duration, check: () throws -> Bool) async rethrows {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        waiters.withLock { $0[requestID, default: [:]][id] = continuation }
        defer {
            waiters.withLock { w in
                w[requestID]?[id] = nil
                if w[requestID]?.isEmpty == true { w[requestID] = nil }
            }
        }
        if try check() { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in stream { return }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    func notify(_ requestID: String) {
        let cs = waiters.withLock { $0[requestID].map { Array($0.values) } ?? [] }
        for c in cs { c.yield() }
    }
}

/// Tells `users` subscriptions that the people of the home changed (added, removed, a password
/// set), so they read the list again.
final class UserFeed: Sendable {
    let listeners = Mutex<[UUID: AsyncStream<Void>.Continuation]>([:])

    /// Changes from now on (the newest only: each one means "read the list again").
    func changes() -> AsyncStream<Void> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in _ = self?.listeners.withLock { $0.removeValue(forKey: id) } }
        listeners.withLock { $0[id] = continuation }
        return stream
    }

    func notify() {
        let cs = listeners.withLock { Array($0.values) }
        for c in cs { c.yield() }
    }
}
