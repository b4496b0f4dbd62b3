public import HearthAPI
import HomeCore
public import HomeModel
import Hummingbird
import Logging

/// What the API needs of the HomeKit bridges (hearthd wires `HAPBridgeGroup` in).
public protocol HAPAdministration: Sendable {
    /// The bridges running now, first one first.
    func hapBridges() -> [WireHAPBridge]
    /// Removes every pairing of bridge `number` (1-based) and ends their sessions; the
    /// controllers removed. Throws notFound for no such bridge.
    func unpair(bridge number: Int) throws(HomeError) -> [String]
}

/// `/hap`: the HomeKit bridges' setup codes, QR codes and pairings, and unpairing. Admins
/// only: the setup code lets anyone on the network add the house to their Home.
struct HAPRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        routes.add(middleware: RoleMiddleware.admin("see the HomeKit setup code or unpair"))
        routes.get("hap") { _, _ in
            let hap = try server.requireHAP()
            return APIResponse.json(WireHAP(bridges: hap.hapBridges()))
        }
        routes.delete("hap/bridges/:number/pairings") { _, context in
            let admin = try context.requireSession()
            let hap = try server.requireHAP()
            let raw = try context.parameter("number")
            guard let number = Int(raw) else { throw HomeError.invalidArgument("'\(raw)' is not a bridge number (1, 2, …)") }
            let removed = try hap.unpair(bridge: number)
            server.logger.notice("HomeKit bridge unpaired", metadata: ["bridge": "\(number)", "removed": "\(removed.count)", "by": "\(admin.principal.id)"])
            return APIResponse.json(WireHAP(bridges: hap.hapBridges()))
        }
        return routes
    }
}

extension HearthServer {
    func requireHAP() throws(HomeError) -> any HAPAdministration {
        guard let hap else { throw .notFound("the HomeKit bridge is off (hap.enabled in hearth.yaml)") }
        return hap
    }
}
