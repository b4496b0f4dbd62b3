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
        routes.ws("ws") { request, context in
            _ = try context.requireSession()
            try Self.checkOrigin(request)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let session = context.requestContext.session else { return }
            let channel = context.requestContext.channel
            try await WebSocketSession(server: server, session: session, outbound: outbound, channel: channel).run(inbound: inbound)
        }
        return routes
    }

    /// A browser names the page that opens a WebSocket in `Origin` (`http(s)://host:port`), and
    /// browsers let any page open one: only the page hearthd serves itself (same host and port)
    /// may, with the token in its URL. Clients that are not browsers send no `Origin`, or a
    /// `ws(s)://` one (swift-websocket's client does), which no page can send.
    static func checkOrigin(_ request: Request) throws(HomeError) {
        try checkOrigin(request.headers[.origin], host: request.head.authority)
    }

    static func checkOrigin(_ origin: String?, host: String?) throws(HomeError) {
        guard let origin else { return }
        let scheme = origin.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https" else { return }
        let host = host ?? ""
        let originHost = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
        guard !host.isEmpty, originHost.lowercased() == host.lowercased() else {
            throw .permissionDenied("a WebSocket from the page at \(origin) is refused: only hearthd's own page (\(host)) may open one")
        }
    }
}
