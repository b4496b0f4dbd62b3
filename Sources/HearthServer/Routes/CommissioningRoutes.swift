import HearthAPI
import HomeCore
import HomeModel
import Hummingbird

/// `/discovered`, `/devices/{id}/commission|decommission`, `/names/check`: bringing a
/// discovered device into the home (the core refuses non-admins).
struct CommissioningRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        var catalog: Catalog { server.core.catalog }  // read per request: plugins add vendor traits
        routes.get("discovered") { _, context in
            let home = try server.home(context)
            return APIResponse.json(
                try await home.discoveredDevices().list().map { WireDevice($0.snapshot, catalog: catalog) }.sorted { $0.id < $1.id })
        }
        routes.post("devices/:id/commission") { request, context in
            let home = try server.home(context)
            let id = DeviceID(rawValue: try context.parameter("id"))
            let body = try await request.decodeStrict(CommissionRequest.self, limit: limit)
            let primary = try body.primaryType.map { ref throws(HomeError) in try catalog.resolveDeviceType(ref) }
            let verdict = try home.commission(id, name: body.name, structure: body.structure, room: body.room, primaryType: primary)
            return APIResponse.json(
                CommissionResponse(
                    device: WireDevice(try home.currentDevice(id: id).snapshot, catalog: catalog), warning: verdict.warning,
                    suggestions: verdict.suggestions))
        }
        routes.post("devices/:id/decommission") { _, context in
            let home = try server.home(context)
            let id = DeviceID(rawValue: try context.parameter("id"))
            try home.edit(.decommission(id))
            return APIResponse.json(WireDevice(try home.currentDevice(id: id).snapshot, catalog: catalog))
        }
        routes.post("names/check") { request, context in
            let home = try server.home(context)
            let body = try await request.decodeStrict(NameCheckRequest.self, limit: limit)
            let v = home.checkName(body.name, room: body.room.map { RoomID(rawValue: $0) })
            return APIResponse.json(
                NameCheckResponse(name: v.name, valid: v.isValid, rules: v.violations.map(\.rule), warning: v.warning, suggestions: v.suggestions))
        }
        return routes
    }
}
