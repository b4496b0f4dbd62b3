import Foundation
import HearthAPI
import HomeCore
import HomeModel
import Hummingbird
import Logging

/// The consent step: an app asks (`POST /apps/requests`) and collects its token (`…/claim`)
/// without signing in; admins list, approve and deny requests and revoke grants (`/grants`).
struct GrantRoutes {
    let server: HearthServer

    /// The app's side: no token yet.
    var open: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        var catalog: Catalog { server.core.catalog }  // read per request: plugins add vendor traits
        routes.post("apps/requests") { request, context in
            // The one write anyone may make without a token: a web page elsewhere must not be
            // able to make a browser send it as a "simple" (text/plain or form) request.
            guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/json") else {
                throw APIError(
                    .invalidArgument("send the request as JSON (Content-Type: application/json)"), status: .unsupportedMediaType)
            }
            let key = "address:\(context.remoteAddress)"
            try server.appRequestLimiter.check(key)
            let body = try await request.decodeStrict(AppAccessRequest.self, limit: limit)
            server.appRequestLimiter.recordFailure(key)
            let types = try (body.deviceTypes ?? []).map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) }
            let automate = try (body.automationTypes ?? []).map { ref throws(HomeError) in try catalog.resolveAutomationType(ref) }
            let (r, secret) = try server.access.createAppRequest(appName: body.name, deviceTypes: types, automationTypes: automate)
            server.logger.notice("an app asks for access", metadata: ["app": "\(r.appName)", "request": "\(r.id)"])
            return APIResponse.json(r.wire(secret: secret), status: .created)
        }
        routes.post("apps/requests/:id/claim") { request, context in
            let id = try context.parameter("id")
            let body = try await request.decodeStrict(ClaimRequest.self, limit: limit)
            try server.access.verifyRequestSecret(id: id, secret: body.secret)
            let wait = min(Duration.seconds(max(0, body.waitSeconds ?? 0)), server.configuration.maxConsentWait)
            var issued: IssuedToken?
            try await server.consent.wait(for: id, timeout: wait) {
                issued = try server.access.claimToken(requestID: id, secret: body.secret, strictOperationValidation: body.strictOperationValidation)
                return issued != nil
            }
            if issued == nil {
                issued = try server.access.claimToken(requestID: id, secret: body.secret, strictOperationValidation: body.strictOperationValidation)
            }
            let r = try server.access.appRequest(id: id)
            guard let issued else { return APIResponse.json(r.wire(), status: .accepted) }
            return APIResponse.json(r.wire(token: issued), status: .ok)
        }
        return routes
    }

    /// The admin's side.
    var admin: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        var catalog: Catalog { server.core.catalog }  // read per request: plugins add vendor traits
        routes.add(middleware: RoleMiddleware.admin("manage app requests and grants"))
        routes.get("apps/requests") { request, _ in
            let pending = request.uri.queryParameters.get("status") == "pending"
            return APIResponse.json(try server.access.appRequests(pendingOnly: pending).map { $0.wire() })
        }
        routes.post("apps/requests/:id/approve") { request, context in
            let admin = try context.requireSession()
            let id = try context.parameter("id")
            let body = try await request.decodeStrict(ApproveRequest.self, limit: limit)
            let current = try server.access.appRequest(id: id)
            let types: Set<DeviceTypeID>?
            if let chosen = body.deviceTypes {
                types = Set(try chosen.map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) })
            } else {
                types = current.requestedDeviceTypes.isEmpty ? nil : Set(current.requestedDeviceTypes)
            }
            // Automation types: the admin's choice, else what the app asked for.
            let automate: Set<AutomationType>? = try body.automationTypes.map { refs throws(HomeError) in
                Set(try refs.map { ref throws(HomeError) in try catalog.resolveAutomationType(ref) })
            } ?? current.requestedAutomationTypes.map(Set.init)
            let scope = GrantScope(
                deviceTypes: types, includeSensitive: body.includeSensitive ?? false, canControl: body.canControl ?? true,
                sensitiveDevices: body.sensitiveDevices.map(Set.init), automationTypes: automate)
            let r = try server.access.approve(requestID: id, scope: scope, by: admin.principal.id)
            server.consent.notify(id)
            server.logger.notice("app request approved", metadata: ["app": "\(r.appName)", "request": "\(id)", "by": "\(admin.principal.id)"])
            return APIResponse.json(r.wire())
        }
        routes.post("apps/requests/:id/deny") { _, context in
            let admin = try context.requireSession()
            let id = try context.parameter("id")
            let r = try server.access.deny(requestID: id, by: admin.principal.id)
            server.consent.notify(id)
            return APIResponse.json(r.wire())
        }
        routes.get("grants") { _, _ in
            APIResponse.json(try server.access.grants(includeRevoked: false).map(\.wire))
        }
        // An admin edits a live grant: fields left out keep their value.
        routes.patch("grants/:id") { request, context in
            let admin = try context.requireSession()
            let id = try context.parameter("id")
            let body = try await request.decodeStrict(ApproveRequest.self, limit: limit)
            guard let current = try server.access.grants(includeRevoked: false).first(where: { $0.id == id }) else {
                throw HomeError.notFound("no live grant \(id)")
            }
            var scope = current.scope
            if let chosen = body.deviceTypes {
                scope.deviceTypes = Set(try chosen.map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) })
            }
            if let v = body.includeSensitive { scope.includeSensitive = v }
            if let v = body.canControl { scope.canControl = v }
            if let v = body.sensitiveDevices { scope.sensitiveDevices = Set(v) }
            if let refs = body.automationTypes {
                scope.automationTypes = Set(try refs.map { ref throws(HomeError) in try catalog.resolveAutomationType(ref) })
            }
            try server.updateGrant(id, scope: scope)
            server.logger.notice("grant changed", metadata: ["grant": "\(id)", "by": "\(admin.principal.id)"])
            guard let updated = try server.access.grants(includeRevoked: false).first(where: { $0.id == id }) else {
                throw HomeError.notFound("no live grant \(id)")
            }
            return APIResponse.json(updated.wire)
        }
        routes.delete("grants/:id") { _, context in
            let admin = try context.requireSession()
            let id = try context.parameter("id")
            guard try server.access.grants(includeRevoked: false).contains(where: { $0.id == id }) else {
                throw HomeError.notFound("no live grant \(id)")
            }
            _ = try server.revoke(tokenID: id, reason: "an admin revoked this app's access")
            server.logger.notice("grant revoked", metadata: ["grant": "\(id)", "by": "\(admin.principal.id)"])
            return Response(status: .noContent)
        }
        return routes
    }
}
