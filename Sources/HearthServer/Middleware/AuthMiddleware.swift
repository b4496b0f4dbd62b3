import Foundation
import HomeCore
import HomeModel
import Hummingbird
import Logging

/// Checks the bearer token and puts the session into the context. Unknown token:
/// `unauthenticated`; revoked: `permissionDenied`.
///
/// The token comes in the `Authorization: Bearer` header; only the WebSocket route also takes
/// `?token=` (a browser cannot set headers on a WebSocket), so a token never has to appear in
/// the URL (and in logs and histories) anywhere else.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let access: any AccessControl

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var token: String?
        if let header = request.headers[.authorization] {
            guard header.lowercased().hasPrefix("bearer ") else {
                throw HomeError(.unauthenticated, "the Authorization header must be 'Bearer <token>'")
            }
            token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        } else if let query = request.uri.queryParameters.get("token") {
            guard Self.takesQueryToken(request.uri.path) else {
                throw HomeError(.unauthenticated, "send the token as 'Authorization: Bearer <token>'; '?token=' is only for the WebSocket")
            }
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

    /// The routes a browser opens without headers: the WebSocket.
    static func takesQueryToken(_ path: String) -> Bool {
        path == "/api/v1/ws" || path == "/api/v1/ws/"
    }
}
