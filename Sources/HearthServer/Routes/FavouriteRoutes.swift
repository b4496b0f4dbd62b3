import HearthAPI
import HomeCore
import HomeModel
import Hummingbird

/// `GET`/`PUT /me/favourites`: each person's pinned devices, kept on the server so they follow
/// them from browser to browser (apps have none).
struct FavouriteRoutes {
    let server: HearthServer

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        let server = self.server
        let limit = server.configuration.maxBodySize
        routes.add(middleware: RoleMiddleware.users("keep favourites"))
        routes.get("me/favourites") { _, context in
            let session = try context.requireSession()
            return APIResponse.json(WireFavourites(devices: try server.access.favourites(username: session.subject)))
        }
        routes.put("me/favourites") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeStrict(WireFavourites.self, limit: limit)
            let stored = try server.access.setFavourites(username: session.subject, body.devices)
            return APIResponse.json(WireFavourites(devices: stored))
        }
        return routes
    }
}
