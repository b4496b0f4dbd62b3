import HearthAPI
import HomeCore
import HomeModel
import Hummingbird
import Logging

/// `/auth/…` and `/me`: first-start setup, sign-in, sign-out, password change.
struct AuthRoutes {
    let server: HearthServer

    /// Setup and sign-in: no token yet.
    var open: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        routes.post("auth/setup") { request, context in
            // Per client: one guesser locks out itself, not the owner finishing setup.
            let key = "address:\(context.remoteAddress)"
            try server.setupLimiter.check(key)
            let body = try await request.decodeStrict(SetupRequest.self, limit: limit)
            do {
                let token = try await server.offload { () throws(HomeError) in
                    try server.access.completeSetup(code: body.code, password: body.password)
                }
                server.logger.notice("setup finished: the first admin has a password")
                return APIResponse.json(token.wire)
            } catch let e as HomeError where e.code == .unauthenticated {
                server.setupLimiter.recordFailure(key)
                server.logger.notice("wrong setup code", metadata: ["address": "\(context.remoteAddress)"])
                throw e
            }
        }
        routes.post("auth/login") { request, context in
            let body = try await request.decodeStrict(LoginRequest.self, limit: limit)
            let keys = ["user:\(body.username)", "address:\(context.remoteAddress)"]
            for k in keys { try server.loginLimiter.check(k) }
            do {
                let token = try await server.offload { () throws(HomeError) in
                    try server.access.login(username: body.username, password: body.password)
                }
                server.loginLimiter.reset(keys[0])
                return APIResponse.json(token.wire)
            } catch let e as HomeError where e.code == .unauthenticated {
                for k in keys { server.loginLimiter.recordFailure(k) }
                server.logger.notice("failed login", metadata: ["user": "\(body.username)", "address": "\(context.remoteAddress)"])
                throw e
            }
        }
        return routes
    }

    /// Signed in: sign-out, own password, who am I.
    var signedIn: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        routes.post("auth/logout") { _, context in
            let s = try context.requireSession()
            _ = try server.revoke(tokenID: s.tokenID, reason: "signed out")
            return Response(status: .noContent)
        }
        routes.post("auth/password") { request, context in
            let s = try context.requireSession()
            guard s.principal.role != .app else {
                throw HomeError.permissionDenied("an app's token has no password; only users change theirs")
            }
            let body = try await request.decodeStrict(PasswordChangeRequest.self, limit: limit)
            // Guessing the current password with a stolen token counts like guessing at login.
            let keys = ["user:\(s.subject)", "address:\(context.remoteAddress)"]
            for k in keys { try server.loginLimiter.check(k) }
            let revoked: [String]
            do {
                revoked = try await server.offload { () throws(HomeError) in
                    try server.access.changePassword(username: s.subject, current: body.current, new: body.new, keeping: s.tokenID)
                }
            } catch let e as HomeError where e.code == .unauthenticated {
                for k in keys { server.loginLimiter.recordFailure(k) }
                server.logger.notice("failed password change", metadata: ["user": "\(s.subject)", "address": "\(context.remoteAddress)"])
                throw e
            }
            server.loginLimiter.reset(keys[0])
            for tokenID in revoked { server.endSession(tokenID, reason: "the password of \(s.subject) was changed") }
            server.logger.notice("password changed", metadata: ["user": "\(s.subject)", "sessionsEnded": "\(revoked.count)"])
            return Response(status: .noContent)
        }
        routes.get("me") { _, context in
            APIResponse.json(try context.requireSession().wire)
        }
        return routes
    }
}
