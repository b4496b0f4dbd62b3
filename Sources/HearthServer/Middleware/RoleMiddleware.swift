import HomeCore
import HomeModel
import Hummingbird

/// Who may use a route collection, checked once for all its routes (after ``AuthMiddleware``).
///
/// The layout's own rules (a member cannot edit it) stay in the core, where every principal
/// meets them; this middleware guards what only the API has: users, grants, plugins, logs.
struct RoleMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    enum Rule: Sendable {
        /// Admins only; the action names what is refused ("manage users").
        case admin(String)
        /// People (admins and members), not apps' tokens ("see the plugins").
        case users(String)
    }

    let rule: Rule

    static func admin(_ action: String) -> Self { Self(rule: .admin(action)) }
    static func users(_ action: String) -> Self { Self(rule: .users(action)) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try check(context.requireSession().principal)
        return try await next(request, context)
    }

    func check(_ principal: Principal) throws(HomeError) {
        switch rule {
        case .admin(let action):
            guard principal.role == .admin else {
                throw .permissionDenied("\(principal.id) is a \(principal.role.rawValue); only an admin can \(action)")
            }
        case .users(let action):
            guard principal.role != .app else { throw .permissionDenied("apps cannot \(action)") }
        }
    }
}

extension APIRequestContext {
    /// The signed-in session (the auth middleware guarantees one on protected routes).
    func requireSession() throws(HomeError) -> AuthSession {
        guard let session else { throw HomeError(.unauthenticated, "sign in first") }
        return session
    }

    func parameter(_ name: String) throws(HomeError) -> String {
        guard let v = parameters.get(name) else { throw .invalidArgument("missing path parameter '\(name)'") }
        return v
    }
}
