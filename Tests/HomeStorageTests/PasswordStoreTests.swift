import Foundation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Changing and resetting passwords in a real SQLite file: which tokens survive, and what a
/// wrong or weak password leaves unchanged.
@Suite struct PasswordStoreTests {
    @Test func change_revokesEveryOtherTokenOfTheUser_butTheCallers() throws {
        try AccessStoreTests.withStore { store, _ in
            try store.addUser(username: "mia", password: "member password", role: .member)
            try store.addUser(username: "leo", password: "leo password", role: .member)
            let caller = try store.login(username: "mia", password: "member password")
            let other = try store.login(username: "mia", password: "member password")
            let leo = try store.login(username: "leo", password: "leo password")

            let revoked = try store.changePassword(username: "mia", current: "member password", new: "a better secret", keeping: caller.id)
            #expect(revoked == [other.id])
            #expect(try store.isLive(tokenID: caller.id))
            #expect(try !store.isLive(tokenID: other.id))
            #expect(try store.isLive(tokenID: leo.id))
            #expect(throws: HomeError.self) { try store.login(username: "mia", password: "member password") }
            _ = try store.login(username: "mia", password: "a better secret")
        }
    }

    @Test func wrongCurrent_isUnauthenticated_forKnownAndUnknownUsersAlike() throws {
        try AccessStoreTests.withStore { store, _ in
            try store.addUser(username: "mia", password: "member password", role: .member)
            let token = try store.login(username: "mia", password: "member password")
            let wrong = #expect(throws: HomeError.self) {
                try store.changePassword(username: "mia", current: "nope nope", new: "a better secret", keeping: token.id)
            }
            let unknown = #expect(throws: HomeError.self) {
                try store.changePassword(username: "zed", current: "nope nope", new: "a better secret", keeping: nil)
            }
            #expect(wrong?.code == .unauthenticated)
            #expect(wrong?.message == unknown?.message)
            #expect(try store.isLive(tokenID: token.id))
            _ = try store.login(username: "mia", password: "member password")
        }
    }

    @Test func weakOrUnchangedNew_isRefused_andNothingIsRevoked() throws {
        try AccessStoreTests.withStore { store, _ in
            try store.addUser(username: "mia", password: "member password", role: .member)
            let other = try store.login(username: "mia", password: "member password")
            let weak = #expect(throws: HomeError.self) {
                try store.changePassword(username: "mia", current: "member password", new: "short", keeping: nil)
            }
            #expect(weak?.code == .invalidArgument)
            #expect(weak?.message.contains("at least 8 characters") == true)
            let same = #expect(throws: HomeError.self) {
                try store.changePassword(username: "mia", current: "member password", new: "member password", keeping: nil)
            }
            #expect(same?.code == .invalidArgument)
            #expect(try store.isLive(tokenID: other.id))
        }
    }

    @Test func reset_setsThePassword_andRevokesAllTheUsersTokens() throws {
        try AccessStoreTests.withStore { store, _ in
            try store.addUser(username: "mia", password: "member password", role: .member)
            let a = try store.login(username: "mia", password: "member password")
            let b = try store.login(username: "mia", password: "member password")
            #expect(Set(try store.resetPassword(username: "mia", new: "reset by admin")) == [a.id, b.id])
            #expect(try !store.isLive(tokenID: a.id))
            #expect(try !store.isLive(tokenID: b.id))
            _ = try store.login(username: "mia", password: "reset by admin")

            let unknown = #expect(throws: HomeError.self) { try store.resetPassword(username: "zed", new: "reset by admin") }
            #expect(unknown?.code == .notFound)
            let weak = #expect(throws: HomeError.self) { try store.resetPassword(username: "mia", new: "short") }
            #expect(weak?.code == .invalidArgument)
        }
    }

    @Test func resetBeforeSetup_retiresTheWaitingSetupCode() throws {
        try AccessStoreTests.withStore { store, _ in
            let code = try #require(try store.bootstrap())
            _ = try store.resetPassword(username: AccessStore.firstAdminName, new: "set directly")
            let e = #expect(throws: HomeError.self) { try store.completeSetup(code: code, password: "someone else's") }
            #expect(e?.code == .unauthenticated)
            #expect(try store.bootstrap() == nil)
            _ = try store.login(username: AccessStore.firstAdminName, password: "set directly")
        }
    }
}
