import Foundation
import HearthAPI
import HearthClient
import HearthServer
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Favourites per user on the server (`GET`/`PUT /me/favourites`): each person their own, in
/// their order, kept in SQLite, gone with the user; apps have none. The Swift client reads and
/// writes them over a real port.
@Suite(.timeLimit(.minutes(1))) struct FavouritesTests {
    static func devices(_ reply: TestHome.Reply) throws -> [DeviceID] {
        try JSONDecoder().decode(WireFavourites.self, from: reply.data).devices
    }

    @Test func routes_keepEachPersonsFavourites_inOrder() async throws {
        try await TestHome.inProcess { home in
            let admin = try home.adminToken()
            let mia = try home.memberToken("mia")
            let noah = try home.memberToken("noah")
            let app = try home.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: false))

            #expect(try Self.devices(try await home.call("GET", "me/favourites", token: mia)) == [])
            let put = try await home.call("PUT", "me/favourites", token: mia, body: #"{"devices":["test:door","test:lamp","test:door"]}"#)
            #expect(put.status == 200, "\(put.text)")
            #expect(try Self.devices(put) == [TestHome.contact, TestHome.lamp], "duplicates dropped, order kept")
            #expect(try Self.devices(try await home.call("GET", "me/favourites", token: mia)) == [TestHome.contact, TestHome.lamp])
            #expect(try Self.devices(try await home.call("GET", "me/favourites", token: noah)) == [], "each person their own")
            #expect(try Self.devices(try await home.call("GET", "me/favourites", token: admin)) == [])
            #expect(try home.access.favourites(username: "mia") == [TestHome.contact, TestHome.lamp], "stored, not kept in the server's memory")

            #expect(try await home.call("GET", "me/favourites", token: app.token).status == 403, "apps keep no favourites")
            #expect(try await home.call("PUT", "me/favourites", token: app.token, body: #"{"devices":[]}"#).status == 403)
            #expect(try await home.call("PUT", "me/favourites", token: mia, body: #"{"devices":"test:lamp"}"#).status == 400)
            #expect(try await home.call("PUT", "me/favourites", token: mia, body: #"{"devices":[],"extra":1}"#).status == 400)
            let many = "[" + (0...AccessStore.maxFavourites).map { "\"x:\($0)\"" }.joined(separator: ",") + "]"
            #expect(try await home.call("PUT", "me/favourites", token: mia, body: #"{"devices":\#(many)}"#).status == 400)
            #expect(try await home.call("GET", "me/favourites").status == 401)

            let cleared = try await home.call("PUT", "me/favourites", token: mia, body: #"{"devices":[]}"#)
            #expect(try Self.devices(cleared) == [])
            _ = try home.access.setFavourites(username: "noah", [TestHome.lamp])
            _ = try home.access.removeUser("noah")
            _ = try home.access.addUser(username: "noah", password: "member password", role: .member)
            #expect(try home.access.favourites(username: "noah") == [], "a removed user's favourites leave with them")
        }
    }

    @Test func client_readsAndWritesFavourites_overARealPort() async throws {
        try await TestHome.with { server in
            let token = try server.memberToken()
            let home = HearthClient.Home(connection: HearthConnection(baseURL: server.baseURL, token: token))
            #expect(try await home.favourites() == [])
            #expect(try await home.setFavourites([TestHome.lamp, TestHome.contact]) == [TestHome.lamp, TestHome.contact])
            let again = HearthClient.Home(connection: HearthConnection(baseURL: server.baseURL, token: try server.access.login(
                username: "mia", password: "member password").token))
            #expect(try await again.favourites() == [TestHome.lamp, TestHome.contact], "another session of the same person sees them")
        }
    }
}
