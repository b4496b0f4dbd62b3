import Foundation
import HashTreeCollections
import HearthAPI
import HomeCore
import HomeModel
import HomeStorage
import Logging
import PluginHost
import Hummingbird
import HummingbirdWebSocket

/// Checks the bearer token (header, or `?token=` for browsers' WebSockets) and puts the
/// session into the context. Unknown token: `unauthenticated`; revoked: `permissionDenied`.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let access: AccessStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var token: String?
        if let header = request.headers[.authorization] {
            guard header.lowercased().hasPrefix("bearer ") else {
                throw HomeError(.unauthenticated, "the Authorization header must be 'Bearer <token>'")
            }
            token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        } else if let query = request.uri.queryParameters.get("token") {
            token = query
        }
        guard let token, !token.isEmpty else {
            throw HomeError(.unauthenticated, "sign in first: send 'Authorization: Bearer <token>' (hearth login)")
        }
        guard let session = try access.authenticate(token: token) else {
            throw HomeError(.unauthenticated, "that token is not known; sign in again (hearth login)")
        }
        var context = context
        context.session = session
        context.logger[metadataKey: "principal"] = "\(session.principal.id)"
        return try await next(request, context)
    }
}

extension APIRequestContext {
    /// The signed-in session (the auth middleware guarantees one on protected routes).
    func requireSession() throws(HomeError) -> AuthSession {
        guard let session else { throw HomeError(.unauthenticated, "sign in first") }
        return session
    }

    /// The session, if it belongs to an admin; else `permissionDenied`.
    func requireAdmin(_ what: String) throws(HomeError) -> AuthSession {
        let s = try requireSession()
        guard s.principal.role == .admin else {
            throw .permissionDenied("\(s.principal.id) is a \(s.principal.role.rawValue); only an admin can \(what)")
        }
        return s
    }

    func parameter(_ name: String) throws(HomeError) -> String {
        guard let v = parameters.get(name) else { throw .invalidArgument("missing path parameter '\(name)'") }
        return v
    }
}

struct ClaimRequest: WireRequest {
    static let keys: Set<String> = ["secret", "waitSeconds"]
    let secret: String
    let waitSeconds: Int?
}

extension HearthServer {
    func addRoutes(to router: Router<APIRequestContext>) {
        router.add(middleware: ErrorMiddleware())
        let limit = configuration.maxBodySize
        let catalog = core.catalog

        // MARK: Open routes: setup, login, the app's side of the consent step.
        let open = router.group("api/v1")
        open.get("health") { _, _ in APIResponse.json(["status": "ok"]) }
        // Liveness and readiness for systemd, Docker and monitors (no sign-in; no secrets).
        router.get("healthz") { _, _ in APIResponse.json(["status": "ok"]) }
        router.get("readyz") { _, _ in
            let r = readiness()
            return APIResponse.json(r, status: r.ready ? .ok : .serviceUnavailable)
        }
        open.post("auth/setup") { request, context in
            try setupLimiter.check("setup")
            let body = try await request.decodeStrict(SetupRequest.self, limit: limit)
            do {
                let token = try await offload { () throws(HomeError) in try access.completeSetup(code: body.code, password: body.password) }
                logger.notice("setup finished: the first admin has a password")
                return APIResponse.json(Self.tokenResponse(token))
            } catch let e as HomeError where e.code == .unauthenticated {
                setupLimiter.recordFailure("setup")
                throw e
            }
        }
        open.post("auth/login") { request, context in
            let body = try await request.decodeStrict(LoginRequest.self, limit: limit)
            let keys = ["user:\(body.username)", "address:\(context.remoteAddress)"]
            for k in keys { try loginLimiter.check(k) }
            do {
                let token = try await offload { () throws(HomeError) in try access.login(username: body.username, password: body.password) }
                loginLimiter.reset(keys[0])
                return APIResponse.json(Self.tokenResponse(token))
            } catch let e as HomeError where e.code == .unauthenticated {
                for k in keys { loginLimiter.recordFailure(k) }
                logger.notice("failed login", metadata: ["user": "\(body.username)", "address": "\(context.remoteAddress)"])
                throw e
            }
        }
        open.post("apps/requests") { request, context in
            let key = "address:\(context.remoteAddress)"
            try appRequestLimiter.check(key)
            let body = try await request.decodeStrict(AppAccessRequest.self, limit: limit)
            appRequestLimiter.recordFailure(key)
            let types = try (body.deviceTypes ?? []).map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) }
            let (r, secret) = try access.createAppRequest(appName: body.name, deviceTypes: types)
            logger.notice("an app asks for access", metadata: ["app": "\(r.appName)", "request": "\(r.id)"])
            return APIResponse.json(Self.wire(r, secret: secret), status: .created)
        }
        open.post("apps/requests/:id/claim") { request, context in
            let id = try context.parameter("id")
            let body = try await request.decodeStrict(ClaimRequest.self, limit: limit)
            try access.verifyRequestSecret(id: id, secret: body.secret)
            let wait = min(Duration.seconds(max(0, body.waitSeconds ?? 0)), configuration.maxConsentWait)
            var issued: IssuedToken?
            try await consent.wait(for: id, timeout: wait) {
                issued = try access.claimToken(requestID: id, secret: body.secret)
                return issued != nil
            }
            if issued == nil { issued = try access.claimToken(requestID: id, secret: body.secret) }
            let r = try access.appRequest(id: id)
            guard let issued else { return APIResponse.json(Self.wire(r), status: .accepted) }
            return APIResponse.json(Self.wire(r, token: issued), status: .ok)
        }

        // MARK: Signed-in routes.
        if let metrics {
            // Prometheus scrapes with `authorization: {credentials: <an admin's token>}`.
            router.group("metrics").add(middleware: AuthMiddleware(access: access)).get { _, context in
                _ = try context.requireAdmin("read the metrics")
                return MetricsServer.response(metrics())
            }
        }
        let api = router.group("api/v1").add(middleware: AuthMiddleware(access: access))
        addWebRoutes(to: router, api: api)
        api.post("auth/logout") { _, context in
            let s = try context.requireSession()
            _ = try revoke(tokenID: s.tokenID, reason: "signed out")
            return Response(status: .noContent)
        }
        api.post("auth/password") { request, context in
            let s = try context.requireSession()
            guard s.principal.role != .app else {
                throw HomeError.permissionDenied("an app's token has no password; only users change theirs")
            }
            let body = try await request.decodeStrict(PasswordChangeRequest.self, limit: limit)
            // Guessing the current password with a stolen token counts like guessing at login.
            let keys = ["user:\(s.subject)", "address:\(context.remoteAddress)"]
            for k in keys { try loginLimiter.check(k) }
            let revoked: [String]
            do {
                revoked = try await offload { () throws(HomeError) in
                    try access.changePassword(username: s.subject, current: body.current, new: body.new, keeping: s.tokenID)
                }
            } catch let e as HomeError where e.code == .unauthenticated {
                for k in keys { loginLimiter.recordFailure(k) }
                logger.notice("failed password change", metadata: ["user": "\(s.subject)", "address": "\(context.remoteAddress)"])
                throw e
            }
            loginLimiter.reset(keys[0])
            for tokenID in revoked { endSession(tokenID, reason: "the password of \(s.subject) was changed") }
            logger.notice("password changed", metadata: ["user": "\(s.subject)", "sessionsEnded": "\(revoked.count)"])
            return Response(status: .noContent)
        }
        api.get("me") { _, context in
            let s = try context.requireSession()
            return APIResponse.json(
                MeResponse(principal: s.principal.id, role: s.principal.role.rawValue, tokenID: s.tokenID, scope: s.principal.scope.map(Self.wire)))
        }
        api.get("catalog") { _, _ in
            APIResponse.json(WireCatalog(deviceTypes: catalog.sortedDeviceTypes, traits: catalog.sortedTraits))
        }
        api.get("plugins") { _, context in
            let s = try context.requireSession()
            guard s.principal.role != .app else { throw HomeError.permissionDenied("apps cannot see the plugins") }
            return APIResponse.json(
                pluginStatuses().map {
                    WirePlugin(id: $0.id, name: $0.name, version: $0.version, path: $0.path, state: $0.state.rawValue, restarts: $0.restarts, lastError: $0.lastError)
                })
        }

        // Structures and rooms.
        api.get("structures") { _, context in
            let home = try home(context)
            return APIResponse.json(try await home.structures().list().sorted { $0.id < $1.id })
        }
        api.post("structures") { request, context in
            let home = try home(context)
            let body = try await request.decodeStrict(NameRequest.self, limit: limit)
            let id = try home.createStructure(named: body.name)
            return APIResponse.json(home.core.state.structures[id], status: .created)
        }
        api.patch("structures/:id") { request, context in
            let home = try home(context)
            let id = StructureID(rawValue: try context.parameter("id"))
            let body = try await request.decodeStrict(NameRequest.self, limit: limit)
            try home.edit(.renameStructure(id, name: body.name))
            return APIResponse.json(home.core.state.structures[id])
        }
        api.delete("structures/:id") { _, context in
            let home = try home(context)
            try home.edit(.deleteStructure(StructureID(rawValue: try context.parameter("id"))))
            return Response(status: .noContent)
        }
        api.get("rooms") { _, context in
            let home = try home(context)
            return APIResponse.json(try await home.rooms().list().sorted { $0.id < $1.id })
        }
        api.post("rooms") { request, context in
            let home = try home(context)
            let body = try await request.decodeStrict(RoomRequest.self, limit: limit)
            let id = try home.createRoom(named: body.name, in: body.structure)
            return APIResponse.json(home.core.state.rooms[id], status: .created)
        }
        api.patch("rooms/:id") { request, context in
            let home = try home(context)
            let id = RoomID(rawValue: try context.parameter("id"))
            let body = try await request.decodeStrict(NameRequest.self, limit: limit)
            try home.edit(.renameRoom(id, name: body.name))
            return APIResponse.json(home.core.state.rooms[id])
        }
        api.delete("rooms/:id") { _, context in
            let home = try home(context)
            try home.edit(.deleteRoom(RoomID(rawValue: try context.parameter("id"))))
            return Response(status: .noContent)
        }

        // Devices.
        api.get("devices") { _, context in
            let home = try home(context)
            return APIResponse.json(try await home.devices().list().map { WireDevice($0.snapshot, catalog: catalog) }.sorted { $0.id < $1.id })
        }
        api.get("discovered") { _, context in
            let home = try home(context)
            return APIResponse.json(
                try await home.discoveredDevices().list().map { WireDevice($0.snapshot, catalog: catalog) }.sorted { $0.id < $1.id })
        }
        api.get("devices/:id") { _, context in
            let home = try home(context)
            let device = try home.currentDevice(id: DeviceID(rawValue: try context.parameter("id")))
            return APIResponse.json(WireDevice(device.snapshot, catalog: catalog))
        }
        api.patch("devices/:id") { request, context in
            let home = try home(context)
            let id = DeviceID(rawValue: try context.parameter("id"))
            let body = try await request.decodeStrict(DevicePatchRequest.self, limit: limit)
            guard body.name != nil || body.room != nil else {
                throw HomeError.invalidArgument("give 'name' and/or 'room' (null takes the device out of its room)")
            }
            _ = try home.currentDevice(id: id)
            if let name = body.name { try home.edit(.renameDevice(id, name: name)) }
            if let room = body.room {
                switch room {
                case .null: try home.edit(.moveDevice(id, to: nil))
                case .string(let r): try home.edit(.moveDevice(id, to: RoomID(rawValue: r)))
                default: throw HomeError.invalidArgument("field 'room' must be a room ID or null, not a \(room.kindName)")
                }
            }
            return APIResponse.json(WireDevice(try home.currentDevice(id: id).snapshot, catalog: catalog))
        }
        api.post("devices/:id/commission") { request, context in
            let home = try home(context)
            let id = DeviceID(rawValue: try context.parameter("id"))
            let body = try await request.decodeStrict(CommissionRequest.self, limit: limit)
            let primary = try body.primaryType.map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) }
            let verdict = try home.commission(id, name: body.name, structure: body.structure, room: body.room, primaryType: primary)
            return APIResponse.json(
                CommissionResponse(
                    device: WireDevice(try home.currentDevice(id: id).snapshot, catalog: catalog), warning: verdict.warning,
                    suggestions: verdict.suggestions))
        }
        api.post("devices/:id/decommission") { _, context in
            let home = try home(context)
            let id = DeviceID(rawValue: try context.parameter("id"))
            try home.edit(.decommission(id))
            return APIResponse.json(WireDevice(try home.currentDevice(id: id).snapshot, catalog: catalog))
        }

        // Control.
        api.post("commands") { request, context in
            let home = try home(context)
            let body = try await request.decodeStrict(CommandWireRequest.self, limit: limit)
            let trait = try catalog.resolveTrait(body.trait)
            let command = CommandRequest(
                device: body.device, deviceType: try catalog.resolveDeviceType(body.type), trait: trait,
                command: try catalog.resolveCommand(body.command, in: trait), arguments: body.args ?? [:])
            let result = try await home.invoke(command)
            return APIResponse.json(CommandWireResponse(result: result))
        }
        api.post("attributes") { request, context in
            let home = try home(context)
            let body = try await request.decodeStrict(WriteWireRequest.self, limit: limit)
            let trait = try catalog.resolveTrait(body.trait)
            try await home.write(
                device: body.device, deviceType: try catalog.resolveDeviceType(body.type), trait: trait,
                attribute: try catalog.resolveAttribute(body.attribute, in: trait), value: body.value)
            return Response(status: .noContent)
        }

        // MARK: Users (admins).
        api.get("users") { _, context in
            _ = try context.requireAdmin("list users")
            return APIResponse.json(
                try access.users().map {
                    WireUser(username: $0.username, role: $0.role.rawValue, hasPassword: $0.hasPassword, createdAt: $0.createdAt)
                })
        }
        api.post("users") { request, context in
            let admin = try context.requireAdmin("add users")
            let body = try await request.decodeStrict(UserRequest.self, limit: limit)
            guard let role = Principal.Role(rawValue: body.role), role != .app else {
                throw HomeError.invalidArgument("field 'role' must be 'admin' or 'member' (got '\(body.role)')")
            }
            let user = try await offload { () throws(HomeError) in try access.addUser(username: body.username, password: body.password, role: role) }
            logger.notice("user added", metadata: ["user": "\(user.username)", "role": "\(role.rawValue)", "by": "\(admin.principal.id)"])
            return APIResponse.json(
                WireUser(username: user.username, role: user.role.rawValue, hasPassword: true, createdAt: user.createdAt), status: .created)
        }
        api.delete("users/:name") { _, context in
            let admin = try context.requireAdmin("remove users")
            let name = try context.parameter("name")
            for tokenID in try access.removeUser(name) { endSession(tokenID, reason: "the user \(name) was removed") }
            logger.notice("user removed", metadata: ["user": "\(name)", "by": "\(admin.principal.id)"])
            return Response(status: .noContent)
        }

        api.put("users/:name/password") { request, context in
            let admin = try context.requireAdmin("reset passwords")
            let name = try context.parameter("name")
            let body = try await request.decodeStrict(PasswordResetRequest.self, limit: limit)
            let revoked = try await offload { () throws(HomeError) in try access.resetPassword(username: name, new: body.password) }
            for tokenID in revoked { endSession(tokenID, reason: "an admin reset the password of \(name)") }
            logger.notice("password reset", metadata: ["user": "\(name)", "by": "\(admin.principal.id)", "sessionsEnded": "\(revoked.count)"])
            return Response(status: .noContent)
        }

        // MARK: App requests and grants (admins).
        api.get("apps/requests") { request, context in
            _ = try context.requireAdmin("see app requests")
            let pending = request.uri.queryParameters.get("status") == "pending"
            return APIResponse.json(try access.appRequests(pendingOnly: pending).map { Self.wire($0) })
        }
        api.post("apps/requests/:id/approve") { request, context in
            let admin = try context.requireAdmin("approve app requests")
            let id = try context.parameter("id")
            let body = try await request.decodeStrict(ApproveRequest.self, limit: limit)
            let current = try access.appRequest(id: id)
            let types: Set<DeviceTypeID>?
            if let chosen = body.deviceTypes {
                types = Set(try chosen.map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) })
            } else {
                types = current.requestedDeviceTypes.isEmpty ? nil : Set(current.requestedDeviceTypes)
            }
            let scope = GrantScope(deviceTypes: types, includeSensitive: body.includeSensitive ?? false, canControl: body.canControl ?? true)
            let r = try access.approve(requestID: id, scope: scope, by: admin.principal.id)
            consent.notify(id)
            logger.notice("app request approved", metadata: ["app": "\(r.appName)", "request": "\(id)", "by": "\(admin.principal.id)"])
            return APIResponse.json(Self.wire(r))
        }
        api.post("apps/requests/:id/deny") { _, context in
            let admin = try context.requireAdmin("deny app requests")
            let id = try context.parameter("id")
            let r = try access.deny(requestID: id, by: admin.principal.id)
            consent.notify(id)
            return APIResponse.json(Self.wire(r))
        }
        api.get("grants") { _, context in
            _ = try context.requireAdmin("see grants")
            return APIResponse.json(try access.grants().map(Self.wire))
        }
        api.delete("grants/:id") { _, context in
            let admin = try context.requireAdmin("revoke grants")
            let id = try context.parameter("id")
            guard try access.grants().contains(where: { $0.id == id }) else { throw HomeError.notFound("no live grant \(id)") }
            _ = try revoke(tokenID: id, reason: "an admin revoked this app's access")
            logger.notice("grant revoked", metadata: ["grant": "\(id)", "by": "\(admin.principal.id)"])
            return Response(status: .noContent)
        }

        // MARK: WebSocket.
        api.ws("ws") { _, context in
            _ = try context.requireSession()
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let session = context.requestContext.session else { return }
            try await WebSocketSession(server: self, session: session, outbound: outbound).run(inbound: inbound)
        }
    }

    /// Runs slow synchronous work (password hashing) on a dispatch thread, so it does not hold
    /// one of the few cooperative threads every request needs.
    func offload<T: Sendable>(_ work: @escaping @Sendable () throws(HomeError) -> T) async throws(HomeError) -> T {
        let result: Result<T, HomeError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(HomeError) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    func home(_ context: APIRequestContext) throws(HomeError) -> Home {
        core.home(for: try context.requireSession().principal)
    }

    static func tokenResponse(_ t: IssuedToken) -> TokenResponse {
        TokenResponse(token: t.token, tokenID: t.id, principal: t.principal.id, role: t.principal.role.rawValue)
    }

    static func wire(_ s: GrantScope) -> WireScope {
        WireScope(deviceTypes: s.deviceTypes.map { $0.sorted() }, includeSensitive: s.includeSensitive, canControl: s.canControl)
    }

    static func wire(_ r: AppRequest, secret: String? = nil, token: IssuedToken? = nil) -> WireAppRequest {
        WireAppRequest(
            id: r.id, appName: r.appName, requestedDeviceTypes: r.requestedDeviceTypes, status: r.status.rawValue, scope: r.scope.map(wire),
            decidedBy: r.decidedBy, createdAt: r.createdAt, secret: secret, token: token?.token, tokenID: token?.id)
    }

    static func wire(_ g: AppGrant) -> WireGrant {
        WireGrant(id: g.id, requestID: g.requestID, appName: g.appName, scope: wire(g.scope), createdAt: g.createdAt)
    }
}
