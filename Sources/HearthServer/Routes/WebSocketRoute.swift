import HomeCore
import HomeModel
import Hummingbird
import HummingbirdWebSocket

/// `/ws`: one socket per client carrying all its subscriptions (``WebSocketSession``).
struct WebSocketRoute {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        routes.ws("ws") { _, context in
            _ = try context.requireSession()
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let session = context.requestContext.session else { return }
            try await WebSocketSession(server: server, session: session, outbound: outbound).run(inbound: inbound)
        }
        return routes
    }
}
