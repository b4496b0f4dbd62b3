import Foundation
import HomeCore
import HomeModel
public import Hummingbird
import HummingbirdWebSocket
import Logging
import HummingbirdCore
import NIOHTTP1

extension HearthServer {
    /// The whole API as a router: every resource's route collection, behind the middlewares
    /// that apply to all (errors as JSON, `nosniff`, the web page's files, sign-in).
    ///
    /// Built without binding a port, so tests can run it in-process
    /// (`HummingbirdTesting`'s `.router` mode); ``run()`` serves it over HTTP and WebSocket.
    public func router() -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: NoSniffMiddleware())
        router.add(middleware: ErrorMiddleware())
        if let root = configuration.webDirectory {
            WebPage.serve(from: root, on: router, logger: logger)
        }
        let health = HealthRoutes(server: self)
        router.addRoutes(health.root)

        // Open routes: setup, sign-in, the app's side of the consent step.
        let open = router.group("api/v1")
        open.addRoutes(health.api)
        open.addRoutes(AuthRoutes(server: self).open)
        open.addRoutes(GrantRoutes(server: self).open)

        // Signed-in routes.
        let auth = AuthMiddleware(access: access)
        if let metrics {
            router.group().add(middleware: auth).addRoutes(MetricsRoutes(render: metrics).collection)
        }
        let api = router.group("api/v1").add(middleware: auth)
        api.addRoutes(AuthRoutes(server: self).signedIn)
        api.addRoutes(LayoutRoutes(server: self).collection)
        api.addRoutes(DeviceRoutes(server: self).collection)
        api.addRoutes(CommissioningRoutes(server: self).collection)
        api.addRoutes(UserRoutes(server: self).collection)
        api.addRoutes(ExposureRoutes(server: self).collection)
        api.addRoutes(HAPRoutes(server: self).collection)
        api.addRoutes(MatterRoutes(server: self).collection)
        api.addRoutes(AutomationRoutes(server: self).collection)
        api.addRoutes(GrantRoutes(server: self).admin)
        api.addRoutes(PermissionChangeRoutes(server: self).app)
        api.addRoutes(PermissionChangeRoutes(server: self).admin)
        api.addRoutes(FavouriteRoutes(server: self).collection)
        api.addRoutes(PluginRoutes(server: self).collection)
        api.addRoutes(LogRoutes(server: self).collection)
        api.addRoutes(WebSocketRoute(server: self).collection)
        return router
    }

    /// The application: ``router()`` on the configured address, with WebSocket upgrades.
    /// `run()` runs it; tests may call `.test(.router)` on it instead.
    public func application() -> some ApplicationProtocol {
        let router = self.router()
        let webSocketResponder = router.buildResponder()
        let limits = configuration.connections
        let ws = WebSocketServerConfiguration(maxFrameSize: configuration.maxWebSocketMessage, autoPing: .enabled(timePeriod: configuration.pingInterval))
        return Application(
            router: router,
            server: limits.serverBuilder(refusesUpgrade: { [access] uri, headers in Self.refusesUpgrade(uri: uri, headers: headers, access: access) }) {
                responder in
                HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: .init(http1: .init(idleTimeout: limits.idleTimeAmount), ws: ws))
            },
            configuration: limits.serverConfiguration(
                address: .hostname(configuration.host, port: configuration.port), listener: "the API listener", logger: logger),
            onServerRunning: { [logger, onListening] channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("API listening", metadata: ["address": "\(channel.localAddress?.description ?? "?")"])
                await onListening(port)
            },
            logger: logger)
    }

    /// Whether the router would refuse this WebSocket upgrade (see ``RefusedUpgradeHandler``):
    /// no token, an unknown one, or a foreign page's `Origin`. The router gives the answer.
    static func refusesUpgrade(uri: String, headers: HTTPHeaders, access: any AccessControl) -> Bool {
        let parsed = URI(uri)
        guard AuthMiddleware.takesQueryToken(parsed.path) else { return false }
        var token: String?
        if let header = headers.first(name: "authorization") {
            guard header.lowercased().hasPrefix("bearer ") else { return true }
            token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        } else {
            token = parsed.queryParameters.get("token")
        }
        guard let token, !token.isEmpty, (try? access.authenticate(token: token)) != nil else { return true }
        do {
            try WebSocketRoute.checkOrigin(headers.first(name: "origin"), host: headers.first(name: "host"))
            return false
        } catch {
            return true
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

    /// The signed-in principal's view of the home.
    func home(_ context: APIRequestContext) throws(HomeError) -> Home {
        core.home(for: try context.requireSession().principal)
    }
}
