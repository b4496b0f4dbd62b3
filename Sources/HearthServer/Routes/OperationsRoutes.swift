import HearthAPI
import HomeCore
import HomeModel
import Hummingbird

/// `/plugins` and `/logs`: how the daemon is doing, for people (not apps).
struct PluginRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        routes.add(middleware: RoleMiddleware.users("see the plugins"))
        routes.get("plugins") { _, _ in APIResponse.json(server.pluginStatuses()) }
        return routes
    }
}

struct LogRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        routes.add(middleware: RoleMiddleware.users("read the daemon's log"))
        routes.get("logs") { request, _ in
            let limit = request.uri.queryParameters.get("limit").flatMap { Int($0) } ?? 200
            return APIResponse.json(server.recentLog?.recent(limit) ?? [])
        }
        return routes
    }
}

/// `GET /metrics` on the API's address, for admins (Prometheus scrapes with an admin's token).
struct MetricsRoutes {
    let render: @Sendable () -> [UInt8]

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let render = self.render
        routes.add(middleware: RoleMiddleware.admin("read the metrics"))
        routes.get("metrics") { _, _ in MetricsServer.response(render()) }
        return routes
    }
}

/// Liveness and readiness for systemd, Docker and monitors: no sign-in, no secrets.
struct HealthRoutes {
    let server: HearthServer

    /// `/healthz`, `/readyz` at the root.
    var root: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        routes.get("healthz") { _, _ in APIResponse.json(["status": "ok"]) }
        routes.get("readyz") { _, _ in
            let r = server.readiness()
            return APIResponse.json(r, status: r.ready ? .ok : .serviceUnavailable)
        }
        return routes
    }

    /// `/api/v1/health`.
    var api: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        routes.get("health") { _, _ in APIResponse.json(["status": "ok"]) }
        return routes
    }
}
