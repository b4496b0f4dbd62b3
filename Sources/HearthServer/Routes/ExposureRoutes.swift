import HearthAPI
import HomeCore
import HashTreeCollections
import HomeModel
import Hummingbird
import Logging

/// `/exposure`: which devices leave the house through every door (MQTT export, the Matter and
/// HAP bridges). Admins only: reading it shows what the house tells the outside.
struct ExposureRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        routes.add(middleware: RoleMiddleware.admin("change what leaves the house"))
        routes.get("exposure") { _, _ in
            let settings = try server.requireExposure()
            return APIResponse.json(server.exposureReport(settings))
        }
        routes.put("exposure") { request, context in
            let admin = try context.requireSession()
            let settings = try server.requireExposure()
            let body = try await request.decodeStrict(WireExposurePolicy.self, limit: limit)
            let (policy, unknown) = ExposurePolicy.resolving(
                rooms: body.rooms ?? [], deviceTypes: body.deviceTypes ?? [], devices: body.devices ?? [],
                excludedRooms: body.excludedRooms ?? [], excludedDeviceTypes: body.excludedDeviceTypes ?? [],
                excludedDevices: body.excludedDevices ?? [], includeSensitive: body.includeSensitive ?? false,
                allowControl: body.allowControl ?? true, state: server.core.state, catalog: server.core.catalog)
            guard unknown.isEmpty else {
                throw HomeError.invalidArgument("no such " + unknown.joined(separator: ", "))
            }
            for id in policy.devices.union(policy.excludedDevices) where !id.rawValue.contains(":") {
                throw HomeError.invalidArgument("'\(id)' is not a device ID (plugin:local, e.g. gpio:relay)")
            }
            try await server.offload { () throws(HomeError) in try settings.update(policy, by: admin.principal) }
            server.logger.notice(
                "exposure changed", metadata: ["by": "\(admin.principal.id)", "sensitive": "\(policy.includeSensitive)", "control": "\(policy.allowControl)"])
            return APIResponse.json(server.exposureReport(settings))
        }
        routes.delete("exposure") { _, context in
            let admin = try context.requireSession()
            let settings = try server.requireExposure()
            try await server.offload { () throws(HomeError) in try settings.reset(by: admin.principal) }
            server.logger.notice("exposure reset to hearth.yaml's", metadata: ["by": "\(admin.principal.id)"])
            return APIResponse.json(server.exposureReport(settings))
        }
        return routes
    }
}

extension HearthServer {
    func requireExposure() throws(HomeError) -> ExposureSettings {
        guard let exposure else { throw .notFound("this server has no exposure settings") }
        return exposure
    }

    func exposureReport(_ settings: ExposureSettings) -> WireExposure {
        let policy = settings.current
        let state = core.state
        let devices = state.commissioned.values.sorted { $0.id < $1.id }.map { d in
            WireExposedDevice(id: d.id.rawValue, name: d.name, verdict: WireExposureVerdict(policy.verdict(for: d, catalog: core.catalog)))
        }
        let wire = WireExposurePolicy(
            rooms: policy.rooms.map(\.rawValue).sorted(), deviceTypes: policy.deviceTypes.sorted().map(\.hex),
            devices: policy.devices.map(\.rawValue).sorted(), excludedRooms: policy.excludedRooms.map(\.rawValue).sorted(),
            excludedDeviceTypes: policy.excludedDeviceTypes.sorted().map(\.hex), excludedDevices: policy.excludedDevices.map(\.rawValue).sorted(),
            includeSensitive: policy.includeSensitive, allowControl: policy.allowControl)
        return WireExposure(
            policy: wire, source: settings.source == .admin ? .admin : .configuration, doors: settings.doors, devices: devices)
    }
}

extension WireExposureVerdict {
    init(_ v: ExposurePolicy.Verdict) {
        switch v {
        case .exposed: self = .exposed
        case .notCommissioned: self = .notCommissioned
        case .excludedDevice: self = .excludedDevice
        case .excludedRoom: self = .excludedRoom
        case .notSelected: self = .notSelected
        case .sensitive: self = .sensitive
        case .noTypeLeft: self = .noTypeLeft
        }
    }
}
