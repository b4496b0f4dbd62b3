import Foundation
import HTTPTypes
import NIOWebSocket
import HearthAPI
import HomeModel
import HummingbirdWSClient
import Logging
import Synchronization

/// The subscriptions of one connection (one token), all over one WebSocket.
///
/// The socket opens with the first subscription and closes when the last one ends, so an idle
/// client holds no socket and no task. Each subscription gets its own server-side ID on the
/// socket (`events#3`) and its own buffer; its messages come back with the caller's ID. It
/// finishes on its `end` or `error` (the reason delivered first), on `closing` (every
/// subscription gets it), or when the socket closes.
///
/// If the consumer of a `stream` or `deviceUpdates` subscription falls so far behind that its
/// buffer overflows, it is resubscribed under a new ID, whose first message is a new snapshot,
/// or every device (a resync); the others on the socket are not touched.
final class WebSocketMux: Sendable {
    let url: String
    let token: String?

    /// One subscription: where its messages go, and what it is on the socket now.
    struct Route {
        let callerID: String
        let continuation: AsyncStream<WSServerMessage>.Continuation
        /// The query a stream that falls behind is resubscribed with.
        let resyncs: SubscriptionQuery?
        /// A `device` subscription: its `permissionDenied` end means the grant no longer covers
        /// that device, not that the session was revoked.
        let watchesOneDevice: Bool
        /// Its ID on the socket (changes with each resync).
        var wireID: String
        let socket: Int
    }

    struct Socket {
        let number: Int
        let outbox: AsyncStream<WSClientMessage>.Continuation
    }

    struct State {
        var routes: [Int: Route] = [:]
        /// Route by its current ID on the socket.
        var byWireID: [String: Int] = [:]
        var socket: Socket?
        var nextRoute = 0
        var nextSocket = 0
        /// Set once hearthd said this session's access was revoked (`end` or `closing` with
        /// `permissionDenied`): why the subscriptions ended.
        var revocation: HomeError?
        /// The newest scope hearthd pushed (`grantUpdated`).
        var grantedScope: WireScope?
    }

    let state = Mutex(State())

    init(url: String, token: String?) {
        self.url = url
        self.token = token
    }

    /// How many sockets this client has opened so far (for tests and diagnostics).
    var socketsOpened: Int { state.withLock { $0.nextSocket } }

    /// `permissionDenied` once hearthd ended a subscription because the session was revoked.
    var revocation: HomeError? { state.withLock { $0.revocation } }

    /// The newest scope hearthd pushed for this session's grant, nil until one came.
    var grantedScope: WireScope? { state.withLock { $0.grantedScope } }

    /// Messages for one subscription; finishes on `end`, `error`, `closing` or a closed socket.
    func messages(subscribe: WSClientMessage, buffer: Int) -> AsyncStream<WSServerMessage> {
        let (stream, continuation) = AsyncStream<WSServerMessage>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        guard case .subscribe(let callerID, let query) = subscribe else {
            continuation.finish()
            return stream
        }
        let resyncs: SubscriptionQuery? =
            switch query {
            case .devices(.stream), .discovered(.stream), .rooms(.stream), .structures(.stream), .users(.stream), .deviceUpdates, .deviceDeltas:
                query
            default: nil
            }
        let (key, wireID, socket, open) = state.withLock { s -> (Int, String, Socket, (number: Int, outbox: AsyncStream<WSClientMessage>)?) in
            var open: (number: Int, outbox: AsyncStream<WSClientMessage>)?
            if s.socket == nil {
                s.nextSocket += 1
                let (outbox, outboxContinuation) = AsyncStream<WSClientMessage>.makeStream()
                s.socket = Socket(number: s.nextSocket, outbox: outboxContinuation)
                open = (s.nextSocket, outbox)
            }
            s.nextRoute += 1
            let wireID = "\(callerID)#\(s.nextRoute)"
            var oneDevice = false
            if case .device = query { oneDevice = true }
            s.routes[s.nextRoute] = Route(
                callerID: callerID, continuation: continuation, resyncs: resyncs, watchesOneDevice: oneDevice, wireID: wireID,
                socket: s.socket!.number)
            s.byWireID[wireID] = s.nextRoute
            return (s.nextRoute, wireID, s.socket!, open)
        }
        if let open {
            // Owned by the mux: it ends when the socket closes, which the last route's end causes.
            Task { await self.run(socket: open.number, outbox: open.outbox) }
        }
        socket.outbox.yield(.subscribe(id: wireID, query))
        continuation.onTermination = { [weak self] _ in self?.cancel(key) }
        return stream
    }

    /// The consumer stopped listening (or the route ended): unsubscribe, and close the socket
    /// when it was the last.
    func cancel(_ key: Int) {
        let (socket, unsubscribe, last) = state.withLock { s -> (Socket?, String?, Bool) in
            guard let route = s.routes.removeValue(forKey: key) else { return (nil, nil, false) }
            // Still live on the server unless it ended it (`end`, `error`).
            let live = s.byWireID.removeValue(forKey: route.wireID) != nil
            guard let socket = s.socket, socket.number == route.socket else { return (nil, nil, false) }
            let last = !s.routes.values.contains { $0.socket == socket.number }
            if last { s.socket = nil }
            return (socket, live ? route.wireID : nil, last)
        }
        guard let socket else { return }
        if let unsubscribe { socket.outbox.yield(.unsubscribe(id: unsubscribe)) }
        if last { socket.outbox.finish() }  // the writer closes the socket after the unsubscribe
    }

    /// Connects, writes the outbox, and routes what the server sends until the socket closes.
    func run(socket number: Int, outbox: AsyncStream<WSClientMessage>) async {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        var logger = Logger(label: "hearth.client.ws")
        logger.logLevel = .critical
        var failure: String?
        do {
            try await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: 1 << 22, additionalHeaders: headers), logger: logger
            ) { inbound, outbound, _ in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await m in outbox {
                            guard let data = try? HearthConnection.encoder.encode(m),
                                (try? await outbound.write(.text(String(decoding: data, as: UTF8.self)))) != nil
                            else { return }
                        }
                        // The last subscription ended.
                        try? await outbound.close(.normalClosure, reason: nil)
                    }
                    group.addTask {
                        // One reader per socket: a device its subscriptions all receive is decoded once.
                        var reader = ServerMessageReader(decoder: HearthConnection.decoder)
                        do {
                            for try await message in inbound.messages(maxSize: 1 << 24) {
                                guard case .text(let text) = message, let m = reader.read(text) else { continue }
                                self.route(m, socket: number)
                            }
                        } catch {
                            // The socket failed; its subscriptions end below.
                        }
                    }
                    await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            failure = "the WebSocket to \(url) failed: \(error)"
        }
        closed(socket: number, failure: failure)
    }

    /// Delivers one message from socket `number` to its subscription (after the lock).
    func route(_ m: WSServerMessage, socket number: Int) {
        switch m {
        case .closing(let e) where e.code == .permissionDenied:
            state.withLock { $0.revocation = $0.revocation ?? e.homeError }
        case .end(let wireID, .permissionDenied, let message):
            state.withLock { s in
                guard let key = s.byWireID[wireID], s.routes[key]?.watchesOneDevice != true else { return }
                s.revocation = s.revocation ?? .permissionDenied(message)
            }
        case .grantUpdated(let scope):
            state.withLock { $0.grantedScope = scope }
            return
        default: break
        }
        if case .closing = m {
            for route in endAll(socket: number) {
                route.continuation.yield(m)
                route.continuation.finish()
            }
            return
        }
        guard let wireID = m.id else { return }
        switch m {
        case .subscribed, .unsubscribed, .pong: return
        case .end, .error:
            // The subscription's last word, with its reason.
            let route = state.withLock { s -> Route? in
                guard let key = s.byWireID.removeValue(forKey: wireID) else { return nil }
                return s.routes[key]
            }
            guard let route else { return }
            route.continuation.yield(m.replacingID(with: route.callerID))
            route.continuation.finish()  // no unsubscribe follows: the server ended it
        default:
            guard let key = state.withLock({ $0.byWireID[wireID] }), let route = state.withLock({ $0.routes[key] }) else { return }
            let result = route.continuation.yield(m.replacingID(with: route.callerID))
            if let query = route.resyncs, case .dropped = result { resync(key, query) }
        }
    }

    /// A stream fell behind: drop its subscription and start over under a new ID.
    func resync(_ key: Int, _ query: SubscriptionQuery) {
        let sent = state.withLock { s -> (Socket, old: String, new: String)? in
            guard var route = s.routes[key], let socket = s.socket, socket.number == route.socket else { return nil }
            s.nextRoute += 1
            let new = "\(route.callerID)#\(s.nextRoute)"
            s.byWireID[route.wireID] = nil
            s.byWireID[new] = key
            let old = route.wireID
            route.wireID = new
            s.routes[key] = route
            return (socket, old, new)
        }
        guard let sent else { return }
        sent.0.outbox.yield(.unsubscribe(id: sent.old))
        sent.0.outbox.yield(.subscribe(id: sent.new, query))
    }

    /// Socket `number` closed: its subscriptions end (with `failure` when it never worked).
    func closed(socket number: Int, failure: String?) {
        for route in endAll(socket: number) {
            if let failure { route.continuation.yield(.error(id: route.callerID, WireError(code: .unreachable, message: failure))) }
            route.continuation.finish()
        }
    }

    /// Takes every route of socket `number` out, and the socket itself.
    func endAll(socket number: Int) -> [Route] {
        state.withLock { s in
            let keys = s.routes.filter { $0.value.socket == number }.map(\.key)
            let routes = keys.compactMap { s.routes.removeValue(forKey: $0) }
            for r in routes { s.byWireID[r.wireID] = nil }
            if s.socket?.number == number {
                s.socket?.outbox.finish()
                s.socket = nil
            }
            return routes
        }
    }
}

/// Kept for the callers: every subscription now goes through the connection's one socket.
enum WebSocketFeed {
    static func messages(_ connection: HearthConnection, subscribe: WSClientMessage, buffer: Int) -> AsyncStream<WSServerMessage> {
        connection.sockets.messages(subscribe: subscribe, buffer: buffer)
    }
}

extension WSServerMessage {
    /// The same message for subscription `id` (the caller's ID, not the socket's).
    func replacingID(with id: String) -> WSServerMessage {
        switch self {
        case .subscribed: .subscribed(id: id)
        case .unsubscribed: .unsubscribed(id: id)
        case .pong: .pong(id: id)
        case .snapshot(_, let version, let set): .snapshot(id: id, version: version, set)
        case .added(_, let e): .added(id: id, e)
        case .updated(_, let e): .updated(id: id, e)
        case .removed(_, let key): .removed(id: id, key: key)
        case .device(_, let d): .device(id: id, d)
        case .changed(_, let version, let devices): .changed(id: id, version: version, devices: devices)
        case .delta(_, let version, let changes): .delta(id: id, version: version, changes: changes)
        case .event(_, let e): .event(id: id, e)
        case .run(_, let run, let missed): .run(id: id, run: run, missed: missed)
        case .end(_, let reason, let message): .end(id: id, reason: reason, message: message)
        case .error(_, let e): .error(id: id, e)
        case .closing, .grantUpdated: self
        }
    }
}
