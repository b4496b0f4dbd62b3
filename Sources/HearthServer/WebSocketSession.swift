import Foundation
import HearthAPI
import HomeCore
import HomeModel
import HomeStorage
import HummingbirdWebSocket
import NIOWebSocket

/// One client's WebSocket: several subscriptions, each with its own id, pings, and a close
/// the moment the session's token is revoked.
///
/// Every subscription reads the core's own per-subscriber buffer and awaits each write to
/// the socket before reading the next update. A slow client therefore holds the core's
/// buffer, which coalesces (`batched`) or resyncs with a fresh snapshot (`stream`) instead of
/// growing: memory per subscription stays bounded whatever the client's speed.
actor WebSocketSession {
    let server: HearthServer
    let session: AuthSession
    let outbound: WebSocketOutboundWriter
    let home: Home
    var subscriptions: [String: Task<Void, Never>] = [:]
    var closed = false

    init(server: HearthServer, session: AuthSession, outbound: WebSocketOutboundWriter) {
        self.server = server
        self.session = session
        self.outbound = outbound
        self.home = server.core.home(for: session.principal)
    }

    func run(inbound: WebSocketInboundStream) async throws {
        let socketID = UUID()
        let revoked = server.sockets.register(session: session.tokenID, id: socketID)
        defer {
            server.sockets.unregister(session: session.tokenID, id: socketID)
        }
        // A revocation between the auth check and the registration must still close us.
        if (try? server.access.isLive(tokenID: session.tokenID)) != true {
            await closeSocket(.permissionDenied("this token was revoked"))
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await reason in revoked {
                    await self.closeSocket(reason)
                    return
                }
            }
            group.addTask {
                do {
                    try await self.readLoop(inbound)
                } catch {
                    // The client went away or sent a broken frame; the socket ends either way.
                }
            }
            await group.next()
            group.cancelAll()
        }
        endAll()
    }

    func readLoop(_ inbound: WebSocketInboundStream) async throws {
        for try await message in inbound.messages(maxSize: server.configuration.maxWebSocketMessage) {
            guard case .text(let text) = message else {
                await send(Self.error(nil, .invalidArgument("send JSON text messages, not binary")))
                continue
            }
            await handle(text)
        }
    }

    func handle(_ text: String) async {
        let message: WSClientMessage
        do {
            let data = Data(text.utf8)
            let value = try? JSONDecoder().decode(Value.self, from: data)
            guard let object = value?.objectValue else { throw HomeError.invalidArgument("a message must be a JSON object") }
            let unknown = Set(object.keys).subtracting(WSClientMessage.keys).sorted()
            guard unknown.isEmpty else {
                throw HomeError.invalidArgument("unknown field(s) \(unknown.joined(separator: ", ")) in a WebSocket message")
            }
            do {
                message = try JSONDecoder().decode(WSClientMessage.self, from: data)
            } catch {
                throw HomeError.invalidArgument("a message needs 'type' (subscribe, unsubscribe, ping) and the right field types")
            }
        } catch {
            await send(Self.error(nil, error as? HomeError ?? .invalidArgument("\(error)")))
            return
        }
        switch message.type {
        case "ping":
            await send(WSServerMessage(type: "pong", id: message.id))
        case "subscribe":
            do {
                try subscribe(message)
                await send(WSServerMessage(type: "subscribed", id: message.id))
            } catch {
                await send(Self.error(message.id, error))
            }
        case "unsubscribe":
            guard let id = message.id, let task = subscriptions.removeValue(forKey: id) else {
                await send(Self.error(message.id, .notFound("no subscription '\(message.id ?? "")' on this socket")))
                return
            }
            task.cancel()
            await send(WSServerMessage(type: "unsubscribed", id: id))
        default:
            await send(Self.error(message.id, .invalidArgument("unknown message type '\(message.type)' (use subscribe, unsubscribe, ping)")))
        }
    }

    func subscribe(_ m: WSClientMessage) throws(HomeError) {
        guard let id = m.id, (1...64).contains(id.count) else {
            throw .invalidArgument("a subscription needs an 'id' of 1 to 64 characters")
        }
        guard subscriptions[id] == nil else { throw .conflict("subscription '\(id)' already exists on this socket") }
        guard subscriptions.count < server.configuration.maxSubscriptionsPerSocket else {
            throw .invalidArgument("at most \(server.configuration.maxSubscriptionsPerSocket) subscriptions per socket")
        }
        let stream: Bool
        switch m.mode ?? "batched" {
        case "batched": stream = false
        case "stream": stream = true
        default: throw .invalidArgument("mode must be 'batched' or 'stream' (got '\(m.mode ?? "")')")
        }
        let catalog = server.core.catalog
        let home = self.home
        let body: @Sendable () async -> String
        switch m.query {
        case "devices", "discovered":
            let query = m.query == "devices" ? home.devices() : home.discoveredDevices()
            let wire: @Sendable (HomeDevice) -> WireDevice = { WireDevice($0.snapshot, catalog: catalog) }
            if stream {
                body = { await self.pumpStream(id, query.stream(), wire) }
            } else {
                body = { await self.pumpBatched(id, query.batched(), wire) }
            }
        case "rooms":
            let wire: @Sendable (RoomSnapshot) -> RoomSnapshot = { $0 }
            if stream {
                body = { await self.pumpStream(id, home.rooms().stream(), wire) }
            } else {
                body = { await self.pumpBatched(id, home.rooms().batched(), wire) }
            }
        case "structures":
            let wire: @Sendable (StructureSnapshot) -> StructureSnapshot = { $0 }
            if stream {
                body = { await self.pumpStream(id, home.structures().stream(), wire) }
            } else {
                body = { await self.pumpBatched(id, home.structures().batched(), wire) }
            }
        case "device":
            guard let device = m.device else { throw .invalidArgument("a 'device' subscription needs 'device' (a device ID)") }
            _ = try home.currentDevice(id: device)
            body = {
                for await d in home.device(id: device) {
                    var out = WSServerMessage(type: "device", id: id)
                    out.device = WireDevice(d.snapshot, catalog: catalog)
                    guard await self.send(out) else { return "the socket closed" }
                }
                return "the device was removed or is no longer visible"
            }
        case "deviceUpdates":
            // One subscription for every tile: all visible devices first, then the ones that
            // changed since the last message (the core coalesces per device while we write).
            body = {
                for await changed in home.changedDevices() {
                    var out = WSServerMessage(type: "changed", id: id)
                    out.version = changed.version
                    out.devices = changed.devices.map { WireDevice($0.snapshot, catalog: catalog) }
                    guard await self.send(out) else { return "the socket closed" }
                }
                return "the subscription ended (revoked or shut down)"
            }
        case "events":
            let trait = try m.trait.map { ref throws(HomeError) in try catalog.resolveTrait(ref) }
            if let device = m.device { _ = try home.currentDevice(id: device) }
            body = {
                for await e in home.events(device: m.device, trait: trait) {
                    var out = WSServerMessage(type: "event", id: id)
                    out.event = WireEvent(e, catalog: catalog)
                    guard await self.send(out) else { return "the socket closed" }
                }
                return "the subscription ended"
            }
        default:
            throw .invalidArgument("query must be devices, discovered, rooms, structures, device, deviceUpdates or events (got '\(m.query ?? "")')")
        }
        subscriptions[id] = Task {
            let reason = await body()
            await self.ended(id, reason: reason)
        }
    }

    func ended(_ id: String, reason: String) async {
        guard subscriptions.removeValue(forKey: id) != nil else { return }
        var out = WSServerMessage(type: "end", id: id)
        out.reason = reason
        await send(out)
    }

    nonisolated func pumpBatched<E: HomeElement, W: Encodable>(
        _ id: String, _ updates: Updates<HomeSet<E>>, _ wire: @escaping @Sendable (E) -> W
    ) async -> String where E.ID: Comparable {
        for await set in updates {
            guard await send(snapshot(id, set, wire)) else { return "the socket closed" }
        }
        return "the subscription ended (revoked or shut down)"
    }

    nonisolated func pumpStream<E: HomeElement, W: Encodable>(
        _ id: String, _ updates: Updates<QueryChange<E>>, _ wire: @escaping @Sendable (E) -> W
    ) async -> String where E.ID: Comparable {
        for await change in updates {
            let out: WSServerMessage
            switch change {
            case .snapshot(let set): out = snapshot(id, set, wire)
            case .added(let e): out = element("added", id, wire(e))
            case .updated(let e): out = element("updated", id, wire(e))
            case .removed(let key):
                var m = WSServerMessage(type: "removed", id: id)
                m.key = "\(key)"
                out = m
            }
            guard await send(out) else { return "the socket closed" }
        }
        return "the subscription ended (revoked or shut down)"
    }

    nonisolated func snapshot<E: HomeElement, W: Encodable>(_ id: String, _ set: HomeSet<E>, _ wire: (E) -> W) -> WSServerMessage
    where E.ID: Comparable {
        var m = WSServerMessage(type: "snapshot", id: id)
        m.version = set.version
        let items = set.sorted { $0.id < $1.id }.map(wire)
        m.devices = items as? [WireDevice]
        m.rooms = items as? [RoomSnapshot]
        m.structures = items as? [StructureSnapshot]
        return m
    }

    nonisolated func element<W: Encodable>(_ type: String, _ id: String, _ item: W) -> WSServerMessage {
        var m = WSServerMessage(type: type, id: id)
        m.device = item as? WireDevice
        m.room = item as? RoomSnapshot
        m.structure = item as? StructureSnapshot
        return m
    }

    /// Sends one message; false once the socket is closed.
    @discardableResult
    func send(_ message: WSServerMessage) async -> Bool {
        guard !closed else { return false }
        do {
            let data = try APIResponse.encoder.encode(message)
            try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
            return true
        } catch {
            closed = true
            return false
        }
    }

    func closeSocket(_ reason: HomeError) async {
        var m = WSServerMessage(type: "closing")
        m.error = reason
        await send(m)
        endAll()
        closed = true
        try? await outbound.close(.policyViolation, reason: String(reason.message.prefix(100)))
    }

    func endAll() {
        for task in subscriptions.values { task.cancel() }
        subscriptions.removeAll()
    }

    static func error(_ id: String?, _ error: HomeError) -> WSServerMessage {
        var m = WSServerMessage(type: "error", id: id)
        m.error = error
        return m
    }
}
