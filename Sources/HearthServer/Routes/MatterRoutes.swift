public import HearthAPI
import HomeCore
public import HomeModel
import Hummingbird
import Logging

/// What the API needs of the Matter bridge (hearthd wires `MatterBridgeService` in).
public protocol MatterAdministration: Sendable {
    func matterStatus() -> WireMatter
    /// Opens a commissioning window with the pairing code (15 minutes).
    func openMatterWindow() throws(HomeError) -> WireMatter
    /// Removes fabric `index` and ends its sessions; notFound for no such fabric.
    func removeMatterFabric(_ index: Int) throws(HomeError) -> WireMatter
}

/// `/matter`: the Matter bridge's pairing code and QR payload, its window and fabrics. Admins
/// only: the pairing code lets anyone on the network add the house to their controller.
struct MatterRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        routes.add(middleware: RoleMiddleware.admin("see the Matter pairing code or change its fabrics"))
        routes.get("matter") { _, _ in
            APIResponse.json(try server.requireMatter().matterStatus())
        }
        routes.post("matter/window") { _, context in
            let admin = try context.requireSession()
            let status = try server.requireMatter().openMatterWindow()
            server.logger.notice("Matter commissioning window opened", metadata: ["by": "\(admin.principal.id)"])
            return APIResponse.json(status)
        }
        routes.delete("matter/fabrics/:index") { _, context in
            let admin = try context.requireSession()
            let raw = try context.parameter("index")
            guard let index = Int(raw), (1...254).contains(index) else { throw HomeError.invalidArgument("'\(raw)' is not a fabric index (1…254)") }
            let status = try server.requireMatter().removeMatterFabric(index)
            server.logger.notice("Matter fabric removed", metadata: ["fabric": "\(index)", "by": "\(admin.principal.id)"])
            return APIResponse.json(status)
        }
        return routes
    }
}

extension HearthServer {
    func requireMatter() throws(HomeError) -> any MatterAdministration {
        guard let matter else { throw .notFound("the Matter bridge is off (matter.enabled in hearth.yaml)") }
        return matter
    }
}
