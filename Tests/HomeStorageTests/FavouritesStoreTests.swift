import Foundation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Favourites per user in a real SQLite file: kept in order across a restart, refused for an
/// unknown user, and removed with the user.
@Suite struct FavouritesStoreTests {
    @Test func favourites_surviveARestart_andLeaveWithTheUser() throws {
        try AccessStoreTests.withStore { store, dir in
            try store.addUser(username: "mia", password: "member password", role: .member)
            #expect(try store.setFavourites(username: "mia", ["demo:lamp", "mqtt:plug", "demo:lamp"]) == ["demo:lamp", "mqtt:plug"])
            #expect(throws: HomeError.notFound("no user named 'ghost'")) { try store.setFavourites(username: "ghost", ["demo:lamp"]) }
            #expect(throws: HomeError.self) { try store.setFavourites(username: "mia", [DeviceID(rawValue: "")]) }

            let reopened = try AccessStoreTests.open(dir)
            #expect(try reopened.favourites(username: "mia") == ["demo:lamp", "mqtt:plug"])
            try reopened.setFavourites(username: "mia", ["mqtt:plug", "demo:lamp"])
            #expect(try store.favourites(username: "mia") == ["mqtt:plug", "demo:lamp"], "the new order")

            try store.addUser(username: "admin2", password: "admin password", role: .admin)
            _ = try store.removeUser("mia")
            #expect(try store.favourites(username: "mia") == [])
        }
    }
}
