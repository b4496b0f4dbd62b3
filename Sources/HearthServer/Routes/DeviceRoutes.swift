import HearthAPI
import HomeCore
import HomeModel
import Hummingbird

/// `/devices`, `/commands`, `/attributes`, `/catalog`: reading, renaming and moving devices,
/// and controlling them.
struct DeviceRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        var catalog: Catalog { server.core.catalog }  // read per request: plugins add vendor traits
        routes.get("catalog") { _, _ in
            APIResponse.json(WireCatalog(deviceTypes: catalog.sortedDeviceTypes, traits: catalog.sortedTraits))
        }
        routes.get("devices") { _, context in
            let home = try server.home(context)
            return APIResponse.json(try await home.devices().list().map { WireDevice($0.snapshot, catalog: catalog) }.sorted { $0.id < $1.id })
        }
        routes.get("devices/:id") { _, context in
            let home = try server.home(context)
            let device = try home.currentDevice(id: DeviceID(rawValue: try context.parameter("id")))
            return APIResponse.json(WireDevice(device.snapshot, catalog: catalog))
        }
        routes.patch("devices/:id") { request, context in
            let home = try server.home(context)
            let id = DeviceID(rawValue: try context.parameter("id"))
            let body = try await request.decodeStrict(DevicePatchRequest.self, limit: limit)
            guard body.name != nil || body.room != nil else {
                throw HomeError.invalidArgument("give 'name' and/or 'room' (null takes the device out of its room)")
            }
            _ = try home.currentDevice(id: id)
            // One edit, all or nothing (a rename with a bad room renames nothing).
            var edits: [LayoutEdit] = body.name.map { [.renameDevice(id, name: $0)] } ?? []
            if let room = body.room {
                switch room {
                case .null: edits.append(.moveDevice(id, to: nil))
                case .string(let r): edits.append(.moveDevice(id, to: RoomID(rawValue: r)))
                default: throw HomeError.invalidArgument("field 'room' must be a room ID or null, not a \(room.kindName)")
                }
            }
            try home.edit(edits)
            return APIResponse.json(WireDevice(try home.currentDevice(id: id).snapshot, catalog: catalog))
        }
        routes.post("commands") { request, context in
            let home = try server.home(context)
            let body = try await request.decodeStrict(CommandWireRequest.self, limit: limit)
            let trait = try catalog.resolveTrait(body.trait)
            let command = CommandRequest(
                device: body.device, deviceType: try catalog.resolveDeviceType(body.type), trait: trait,
                command: try catalog.resolveCommand(body.command, in: trait), arguments: body.args ?? [:])
            let result = try await home.invoke(command)
            return APIResponse.json(CommandWireResponse(result: result))
        }
        routes.post("attributes") { request, context in
            let home = try server.home(context)
            let body = try await request.decodeStrict(WriteWireRequest.self, limit: limit)
            let trait = try catalog.resolveTrait(body.trait)
            try await home.write(
                device: body.device, deviceType: try catalog.resolveDeviceType(body.type), trait: trait,
                attribute: try catalog.resolveAttribute(body.attribute, in: trait), value: body.value)
            return Response(status: .noContent)
        }
        return routes
    }
}
