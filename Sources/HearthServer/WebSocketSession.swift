import Foundation
import HearthAPI
import HomeCore
import HomeModel
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket

/// One client's WebSocket: all its subscriptions, each with its own id, pings, and a close
/// the moment the session's token is revoked. Messages are ``WSClientMessage`` in and
/// ``WSServerMessage`` out.
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
    /// A subscription's task, and which subscription under its id it is: a task that ends
    /// after its id was unsubscribed and subscribed again must not take the new one's entry.
    struct Subscription {
        let generation: UInt64
        let task: Task<Void, Never>
    }
    var subscriptions: [String: Subscription] = [:]
    var nextGeneration: UInt64 = 0
    /// Subscriptions written by the event loop: started once `subscribed` is written, and
    /// stopped here (not only by their task) so nothing follows `unsubscribed`.
    var writers: [String: WebSocketDirectDeltas] = [:]
    /// The socket's channel (``WebSocketDirectDeltas`` writes to it from its event loop).
    let channel: any Channel
    var closed = false

    /// How a subscription's source finished: the socket closed (nothing more to say), or the
    /// end to report.
    enum Finish: Sendable {
        case socketClosed
        case end(EndReason, String)
    }

    init(server: HearthServer, session: AuthSession, outbound: WebSocketOutboundWriter, channel: any Channel) {
        self.server = server
        self.session = session
        self.outbound = outbound
        self.channel = channel
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
                for await signal in revoked {
                    switch signal {
                    case .close(let reason):
                        await self.closeSocket(reason)
                        return
                    case .grantUpdated(let scope):
                        await self.send(.grantUpdated(scope))
                    }
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
                await send(.error(id: nil, WireError(.invalidArgument("send JSON text messages, not binary"))))
                continue
            }
            await handle(text)
        }
    }

    func handle(_ text: String) async {
        let message: WSClientMessage
        do {
            message = try Self.decode(text)
        } catch {
            await send(.error(id: Self.id(in: text), WireError(error)))
            return
        }
        switch message {
        case .ping(let id):
            await send(.pong(id: id))
        case .subscribe(let id, let query):
            do {
                // Trace streams are opened first: a refusal (an automation the session may not
                // read) is the subscription's error, never a `subscribed`.
                var runs: AsyncStream<AutomationRunUpdate>?
                if case .automationRuns(let automation) = query, subscriptions[id] == nil {
                    runs = try await runUpdates(of: automation)
                }
                try subscribe(id, query, runs: runs)
                await send(.subscribed(id: id))
                writers[id]?.start()
            } catch {
                await send(.error(id: id, WireError(error)))
            }
        case .unsubscribe(let id):
            guard let subscription = subscriptions.removeValue(forKey: id) else {
                await send(.error(id: id, WireError(.notFound("no subscription '\(id)' on this socket"))))
                return
            }
            subscription.task.cancel()
            writers.removeValue(forKey: id)?.cancel()
            await send(.unsubscribed(id: id))
        }
    }

    /// A client message, strictly: a JSON object with known keys and a known `type`.
    static func decode(_ text: String) throws(HomeError) -> WSClientMessage {
        let data = Data(text.utf8)
        let value = try? JSONDecoder().decode(Value.self, from: data)
        guard let object = value?.objectValue else { throw .invalidArgument("a message must be a JSON object") }
        let unknown = Set(object.keys).subtracting(WSClientMessage.keys).sorted()
        guard unknown.isEmpty else {
            throw .invalidArgument("unknown field(s) \(unknown.joined(separator: ", ")) in a WebSocket message")
        }
        guard let type = object["type"]?.stringValue, let kind = WSClientMessage.Kind(rawValue: type) else {
            let known = WSClientMessage.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw .invalidArgument("unknown message type '\(object["type"]?.stringValue ?? "")' (use \(known))")
        }
        if kind == .subscribe {
            if let mode = object["mode"], SubscriptionMode(rawValue: mode.stringValue ?? "") == nil {
                throw .invalidArgument("mode must be 'batched' or 'stream' (got '\(mode.stringValue ?? "\(mode)")')")
            }
            if SubscriptionQuery.Name(rawValue: object["query"]?.stringValue ?? "") == nil {
                let known = SubscriptionQuery.Name.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidArgument("query must be one of \(known) (got '\(object["query"]?.stringValue ?? "")')")
            }
            guard let id = object["id"]?.stringValue, (1...64).contains(id.count) else {
                throw .invalidArgument("a subscription needs an 'id' of 1 to 64 characters")
            }
            if object["query"]?.stringValue == SubscriptionQuery.Name.device.rawValue, object["device"]?.stringValue == nil {
                throw .invalidArgument("a 'device' subscription needs 'device' (a device ID)")
            }
        }
        do {
            return try JSONDecoder().decode(WSClientMessage.self, from: data)
        } catch {
            throw .invalidArgument("a \(kind.rawValue) message needs 'id' and the right field types")
        }
    }

    /// The `id` of a message that could not be read, to tag its error.
    static func id(in text: String) -> String? {
        (try? JSONDecoder().decode(Value.self, from: Data(text.utf8)))?["id"]?.stringValue
    }

    /// Opens the engine's trace stream for `automationRuns` (the engine's refusal as a `HomeError`).
    func runUpdates(of automation: String?) async throws(HomeError) -> AsyncStream<AutomationRunUpdate> {
        guard let control = server.automations else { throw .notFound("this server has no automation engine") }
        do {
            return try await control.runUpdates(of: automation, as: session.principal)
        } catch let refusal as AutomationRefusal {
            throw refusal.error
        } catch let error as HomeError {
            throw error
        } catch {
            throw .internal("\(error)")
        }
    }

    func subscribe(_ id: String, _ query: SubscriptionQuery, runs: AsyncStream<AutomationRunUpdate>? = nil) throws(HomeError) {
        guard subscriptions[id] == nil else { throw .conflict("subscription '\(id)' already exists on this socket") }
        guard subscriptions.count < server.configuration.maxSubscriptionsPerSocket else {
            throw .invalidArgument("at most \(server.configuration.maxSubscriptionsPerSocket) subscriptions per socket")
        }
        let catalog = server.core.catalog
        let home = self.home
        // Messages are encoded in the subscription's own task, before the hop to this actor, so
        // a socket's subscriptions encode in parallel; devices come from the server-wide text.
        let text = WebSocketText(devices: server.deviceText)
        let body: @Sendable () async -> Finish
        switch query {
        case .devices(let mode), .discovered(let mode):
            let source = query.name == .devices ? home.devices() : home.discoveredDevices()
            body = {
                await self.pump(
                    id, source, mode, set: { version, set in try text.set(.snapshot, id: id, version: version, set.map(\.snapshot)) },
                    element: { kind, d in try text.element(kind, id: id, d.snapshot) })
            }
        case .rooms(let mode):
            body = {
                await self.pump(
                    id, home.rooms(), mode, set: { version, set in try WebSocketText.text(.snapshot(id: id, version: version, .rooms(set))) },
                    element: { kind, r in try WebSocketText.text(.element(kind, id: id, .room(r))) })
            }
        case .structures(let mode):
            body = {
                await self.pump(
                    id, home.structures(), mode,
                    set: { version, set in try WebSocketText.text(.snapshot(id: id, version: version, .structures(set))) },
                    element: { kind, s in try WebSocketText.text(.element(kind, id: id, .structure(s))) })
            }
        case .device(let deviceID):
            _ = try home.currentDevice(id: deviceID)
            body = {
                for await d in home.device(id: deviceID) {
                    guard await self.send(text: try? text.element(.device, id: id, d.snapshot)) else { return .socketClosed }
                }
                guard await self.isLive else { return .end(.permissionDenied, "access was revoked") }
                return await self.lostAccess(to: deviceID)
                    ? .end(.permissionDenied, "this app's grant no longer covers \(deviceID)")
                    : .end(.deviceRemoved, "the device was removed or is no longer visible")
            }
        case .deviceUpdates:
            // One subscription for every tile: all visible devices first, then the ones that
            // changed since the last message (the core coalesces per device while we write).
            body = {
                for await changed in home.changedDevices() {
                    let out = try? text.set(.changed, id: id, version: changed.version, changed.devices.map(\.snapshot))
                    guard await self.send(text: out) else { return .socketClosed }
                }
                return await self.endOfSource()
            }
        case .deviceDeltas:
            // The same, as deltas: the client keeps each device and applies what changed. The
            // socket's event loop takes the changes and writes them itself (no task per change);
            // it starts once `subscribed` is written (``startWriters(of:)``).
            let writer = WebSocketDirectDeltas(channel: channel, id: id, text: text, home: home, pacing: server.configuration.deltaPacing)
            writers[id] = writer
            body = {
                for await outcome in writer.finished {
                    return outcome == .sourceEnded ? await self.endOfSource() : .socketClosed
                }
                writer.cancel()  // the subscription's task was cancelled (unsubscribed, socket ended)
                return .socketClosed
            }
        case .users(let mode):
            try RoleMiddleware.users("see the people of the home").check(session.principal)
            body = { await self.pumpUsers(id, mode) }
        case .automationRuns(let automation):
            // The same rules as `GET /automations/ID/runs`, checked now (an automation the
            // session may not read is `notFound`) and for every trace the engine sends.
            guard let updates = runs else { throw .internal("the trace stream was not opened") }
            body = {
                for await update in updates {
                    guard let run = try? JSONDecoder().decode(Value.self, from: update.trace) else { continue }
                    guard await self.send(text: try? WebSocketText.text(.run(id: id, run: run, missed: update.missed))) else { return .socketClosed }
                }
                guard await self.isLive else { return .end(.permissionDenied, "access was revoked") }
                return .end(.ended, automation.map { "automation '\($0)' was deleted, or the engine stopped" } ?? "the automation engine stopped")
            }
        case .events(let deviceID, let traitRef):
            let trait = try traitRef.map { ref throws(HomeError) in try catalog.resolveTrait(ref) }
            if let deviceID { _ = try home.currentDevice(id: deviceID) }
            body = {
                for await e in home.events(device: deviceID, trait: trait) {
                    guard await self.send(text: try? WebSocketText.text(.event(id: id, WireEvent(e, catalog: catalog)))) else { return .socketClosed }
                }
                return await self.endOfSource()
            }
        }
        nextGeneration += 1
        let generation = nextGeneration
        subscriptions[id] = Subscription(
            generation: generation,
            task: Task {
                let finish = await body()
                await self.ended(id, generation, finish)
            })
    }

    /// Whether the session's token is still live (a source that finishes on revocation ends
    /// with `permissionDenied`).
    var isLive: Bool { (try? server.access.isLive(tokenID: session.tokenID)) == true }

    /// Whether a device this session no longer sees is still in the home (commissioned): an
    /// app's grant was narrowed. A decommissioned or removed device is `deviceRemoved`.
    func lostAccess(to device: DeviceID) -> Bool {
        guard session.principal.role == .app, (try? home.currentDevice(id: device)) == nil else { return false }
        return (try? server.core.home(for: .system).currentDevice(id: device))?.snapshot.commissioning == .commissioned
    }

    func endOfSource() -> Finish {
        isLive ? .end(.ended, "the subscription ended (shut down)") : .end(.permissionDenied, "access was revoked")
    }

    func ended(_ id: String, _ generation: UInt64, _ finish: Finish) async {
        // Unsubscribed (and perhaps subscribed again under the same id): not this one's to end.
        guard subscriptions[id]?.generation == generation else { return }
        subscriptions[id] = nil
        writers[id] = nil
        guard case .end(let reason, let message) = finish else { return }
        await send(.end(id: id, reason: reason, message: message))
    }

    /// Sends a set subscription's updates: whole sets (`batched`) or changes (`stream`), each
    /// message made by `set` (a version and the sorted set) or `element` (`added`, `updated`).
    nonisolated func pump<E: HomeElement>(
        _ id: String, _ query: Query<E>, _ mode: SubscriptionMode, set: (UInt64, [E]) throws -> String,
        element: (WSServerMessage.Kind, E) throws -> String
    ) async -> Finish where E.ID: Comparable {
        switch mode {
        case .batched:
            for await s in query.batched() {
                guard await send(text: try? set(s.version, s.sorted { $0.id < $1.id })) else { return .socketClosed }
            }
        case .stream:
            for await change in query.stream() {
                let out: String?
                switch change {
                case .snapshot(let s): out = try? set(s.version, s.sorted { $0.id < $1.id })
                case .added(let e): out = try? element(.added, e)
                case .updated(let e): out = try? element(.updated, e)
                case .removed(let key): out = try? WebSocketText.text(.removed(id: id, key: "\(key)"))
                }
                guard await send(text: out) else { return .socketClosed }
            }
        }
        return await endOfSource()
    }

    /// Sends the users (names and roles): the list now, then again (`batched`) or what changed
    /// (`stream`) whenever a user is added or removed or a password set.
    nonisolated func pumpUsers(_ id: String, _ mode: SubscriptionMode) async -> Finish {
        let changes = server.userChanges.changes()  // before the first read: no change slips by
        var version: UInt64 = 0
        var last: [String: WireUser]?
        var wake = changes.makeAsyncIterator()
        repeat {
            guard let users = try? server.access.users().map(\.wire).sorted(by: { $0.username < $1.username }) else { break }
            version += 1
            let now = Dictionary(uniqueKeysWithValues: users.map { ($0.username, $0) })
            var out: [WSServerMessage] = []
            if mode == .batched || last == nil {
                out = [.snapshot(id: id, version: version, .users(users))]
            } else if let before = last {
                for u in users where before[u.username] != u {
                    out.append(before[u.username] == nil ? .added(id: id, .user(u)) : .updated(id: id, .user(u)))
                }
                for name in before.keys.sorted() where now[name] == nil { out.append(.removed(id: id, key: name)) }
            }
            last = now
            for m in out {
                guard await send(m) else { return .socketClosed }
            }
        } while await wake.next() != nil
        return await endOfSource()
    }

    /// Sends one message; false once the socket is closed.
    @discardableResult
    func send(_ message: WSServerMessage) async -> Bool {
        await send(text: try? WebSocketText.text(message))
    }

    /// Writes one encoded message (nil: it could not be encoded, which ends the socket's
    /// sending as a failed write does); false once the socket is closed.
    @discardableResult
    func send(text: String?) async -> Bool {
        guard !closed else { return false }
        guard let text else {
            closed = true
            return false
        }
        do {
            try await outbound.write(.text(text))
            return true
        } catch {
            // A subscription unsubscribed while its write waited for room in the socket: that
            // message is dropped (a whole frame, never part of one) and the socket goes on.
            // Marking it closed here silenced every other subscription and reply on it.
            if error is CancellationError || Task.isCancelled { return false }
            closed = true
            return false
        }
    }

    func closeSocket(_ reason: HomeError) async {
        await send(.closing(WireError(reason)))
        endAll()
        closed = true
        try? await outbound.close(.policyViolation, reason: String(reason.message.prefix(100)))
    }

    func endAll() {
        for subscription in subscriptions.values { subscription.task.cancel() }
        subscriptions.removeAll()
        for writer in writers.values { writer.cancel() }
        writers.removeAll()
    }
}
