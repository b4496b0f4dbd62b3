import Foundation
import HearthAPI
import HomeCore
import HomeModel
import Hummingbird
import Logging

/// Permission changes (Google Home APIs `presentPermissionsUpdate`): an app with a grant asks
/// for another scope and waits for the decision (long poll); an admin lists, approves (the
/// grant changes and the app's open subscriptions follow at once) or denies.
struct PermissionChangeRoutes {
    let server: HearthServer

    /// The app's side: its own grant only.
    var app: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        var catalog: Catalog { server.core.catalog }
        routes.post("apps/permissions") { request, context in
            let session = try Self.appSession(context)
            let body = try await request.decodeStrict(PermissionsUpdateRequest.self, limit: limit)
            let types = try (body.deviceTypes ?? []).map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) }
            let change = try server.access.requestGrantChange(grantID: session.tokenID, deviceTypes: types)
            server.logger.notice("an app asks to change its permissions", metadata: ["app": "\(change.appName)", "change": "\(change.id)"])
            return APIResponse.json(change.wire, status: .created)
        }
        // The decision, waiting up to `waitSeconds` while it is pending (202 until decided).
        routes.get("apps/permissions/:id") { request, context in
            let session = try Self.appSession(context)
            let id = try context.parameter("id")
            var change = try server.access.grantChange(id: id)
            guard change.grantID == session.tokenID else { throw HomeError.notFound("no permission change \(id)") }
            let asked = request.uri.queryParameters.get("waitSeconds").flatMap { Int($0) } ?? 0
            let wait = min(Duration.seconds(max(0, asked)), server.configuration.maxConsentWait)
            try await server.consent.wait(for: id, timeout: wait) {
                change = try server.access.grantChange(id: id)
                return change.status != .pending
            }
            change = try server.access.grantChange(id: id)
            return APIResponse.json(change.wire, status: change.status == .pending ? .accepted : .ok)
        }
        return routes
    }

    /// The admin's side.
    var admin: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        var catalog: Catalog { server.core.catalog }
        routes.add(middleware: RoleMiddleware.admin("decide on apps' permission changes"))
        routes.get("grants/changes") { request, _ in
            let pending = request.uri.queryParameters.get("status") == "pending"
            return APIResponse.json(try server.access.grantChanges(pendingOnly: pending).map(\.wire))
        }
        // Fields left out: the device types the app asked for, everything else as the grant has it.
        routes.post("grants/changes/:id/approve") { request, context in
            let admin = try context.requireSession()
            let id = try context.parameter("id")
            let body = try await request.decodeStrict(ApproveRequest.self, limit: limit)
            let change = try server.access.grantChange(id: id)
            guard let grant = try server.access.grants(includeRevoked: false).first(where: { $0.id == change.grantID }) else {
                throw HomeError.notFound("the grant \(change.grantID) of permission change \(id) was revoked")
            }
            var scope = change.askedScope(from: grant.scope)
            if let chosen = body.deviceTypes {
                scope.deviceTypes = chosen.isEmpty ? nil : Set(try chosen.map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) })
            }
            if let v = body.includeSensitive { scope.includeSensitive = v }
            if let v = body.canControl { scope.canControl = v }
            if let v = body.sensitiveDevices { scope.sensitiveDevices = Set(v) }
            let decided = try server.access.approveGrantChange(id: id, scope: scope, by: admin.principal.id)
            try server.followGrant(decided.grantID)
            server.consent.notify(id)
            server.logger.notice(
                "permission change approved", metadata: ["app": "\(decided.appName)", "change": "\(id)", "by": "\(admin.principal.id)"])
            return APIResponse.json(decided.wire)
        }
        routes.post("grants/changes/:id/deny") { _, context in
            let admin = try context.requireSession()
            let id = try context.parameter("id")
            let decided = try server.access.denyGrantChange(id: id, by: admin.principal.id)
            server.consent.notify(id)
            return APIResponse.json(decided.wire)
        }
        return routes
    }

    static func appSession(_ context: APIRequestContext) throws(HomeError) -> AuthSession {
        let session = try context.requireSession()
        guard session.principal.role == .app else {
            throw .permissionDenied("only an app with a grant asks to change its permissions; people sign in with their role")
        }
        return session
    }
}
