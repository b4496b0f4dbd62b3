import HearthAPI
import HomeCore
import HomeModel
import HashTreeCollections
import Hummingbird

/// `/structures` and `/rooms`. Everyone signed in reads; the core refuses edits by non-admins.
struct LayoutRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        routes.get("structures") { _, context in
            let home = try server.home(context)
            return APIResponse.json(try await home.structures().list().sorted { $0.id < $1.id })
        }
        routes.post("structures") { request, context in
            let home = try server.home(context)
            let body = try await request.decodeStrict(NameRequest.self, limit: limit)
            let id = try home.createStructure(named: body.name)
            return APIResponse.json(home.core.state.structures[id], status: .created)
        }
        routes.patch("structures/:id") { request, context in
            let home = try server.home(context)
            let id = StructureID(rawValue: try context.parameter("id"))
            let body = try await request.decodeStrict(NameRequest.self, limit: limit)
            try home.edit(.renameStructure(id, name: body.name))
            return APIResponse.json(home.core.state.structures[id])
        }
        routes.delete("structures/:id") { _, context in
            let home = try server.home(context)
            try home.edit(.deleteStructure(StructureID(rawValue: try context.parameter("id"))))
            return Response(status: .noContent)
        }
        routes.get("rooms") { _, context in
            let home = try server.home(context)
            return APIResponse.json(try await home.rooms().list().sorted { $0.id < $1.id })
        }
        routes.post("rooms") { request, context in
            let home = try server.home(context)
            let body = try await request.decodeStrict(RoomRequest.self, limit: limit)
            let id = try home.createRoom(named: body.name, in: body.structure)
            return APIResponse.json(home.core.state.rooms[id], status: .created)
        }
        routes.patch("rooms/:id") { request, context in
            let home = try server.home(context)
            let id = RoomID(rawValue: try context.parameter("id"))
            let body = try await request.decodeStrict(NameRequest.self, limit: limit)
            try home.edit(.renameRoom(id, name: body.name))
            return APIResponse.json(home.core.state.rooms[id])
        }
        routes.delete("rooms/:id") { _, context in
            let home = try server.home(context)
            try home.edit(.deleteRoom(RoomID(rawValue: try context.parameter("id"))))
            return Response(status: .noContent)
        }
        return routes
    }
}
