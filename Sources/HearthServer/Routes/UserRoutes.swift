import HearthAPI
import HomeCore
import HomeModel
import Hummingbird
import Logging

/// `/users`: people (admins and members) list the users — names and roles, never credentials;
/// admins add and remove users and reset their passwords. Each change wakes `users`
/// subscriptions on the WebSocket.
struct UserRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        let people = RoleMiddleware.users("see the people of the home")
        let admins = RoleMiddleware.admin("manage users")
        routes.get("users") { _, context in
            try people.check(context.requireSession().principal)
            return APIResponse.json(try server.access.users().map(\.wire))
        }
        routes.post("users") { request, context in
            let admin = try context.requireSession()
            try admins.check(admin.principal)
            let body = try await request.decodeStrict(UserRequest.self, limit: limit)
            let role = Principal.Role(body.role)
            guard role != .app else {
                throw HomeError.invalidArgument("field 'role' must be 'admin' or 'member' (got '\(body.role.rawValue)')")
            }
            let user = try await server.offload { () throws(HomeError) in
                try server.access.addUser(username: body.username, password: body.password, role: role)
            }
            server.userChanges.notify()
            server.logger.notice("user added", metadata: ["user": "\(user.username)", "role": "\(role.rawValue)", "by": "\(admin.principal.id)"])
            return APIResponse.json(user.wire, status: .created)
        }
        routes.delete("users/:name") { _, context in
            let admin = try context.requireSession()
            try admins.check(admin.principal)
            let name = try context.parameter("name")
            for tokenID in try server.access.removeUser(name) { server.endSession(tokenID, reason: "the user \(name) was removed") }
            server.userChanges.notify()
            server.logger.notice("user removed", metadata: ["user": "\(name)", "by": "\(admin.principal.id)"])
            return Response(status: .noContent)
        }
        routes.put("users/:name/password") { request, context in
            let admin = try context.requireSession()
            try admins.check(admin.principal)
            let name = try context.parameter("name")
            let body = try await request.decodeStrict(PasswordResetRequest.self, limit: limit)
            let revoked = try await server.offload { () throws(HomeError) in try server.access.resetPassword(username: name, new: body.password) }
            for tokenID in revoked { server.endSession(tokenID, reason: "an admin reset the password of \(name)") }
            server.userChanges.notify()
            server.logger.notice(
                "password reset", metadata: ["user": "\(name)", "by": "\(admin.principal.id)", "sessionsEnded": "\(revoked.count)"])
            return Response(status: .noContent)
        }
        return routes
    }
}
