import Foundation
import GRDB
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Users, tokens, setup codes and app grants in a real SQLite file: hashed, one-time where
/// they should be, and surviving a restart.
@Suite struct AccessStoreTests {
    /// A fresh database file in a temporary folder, migrated.
    static func withStore<T>(_ body: (AccessStore, URL) throws -> T) throws -> T {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        return try body(try open(dir), dir)
    }

    static func open(_ dir: URL) throws -> AccessStore {
        let pool = try DatabasePool(path: dir.appendingPathComponent("hearth.sqlite").path)
        var migrator = DatabaseMigrator()
        AccessStore.registerMigrations(in: &migrator)
        try migrator.migrate(pool)
        return AccessStore(writer: pool, passwordRounds: 1_000)
    }

    @Test func firstStart_createsAnAdmin_withAOneTimeSetupCode() throws {
        try Self.withStore { store, _ in
            let code = try #require(try store.bootstrap())
            #expect(try store.users().map(\.username) == ["admin"])
            #expect(try store.users().first?.hasPassword == false)
            let token = try store.completeSetup(code: code.lowercased(), password: "correct horse")
            #expect(token.principal.role == .admin)
            #expect(throws: HomeError.self) { try store.completeSetup(code: code, password: "another password") }
            #expect(try store.bootstrap() == nil, "setup is done: no new code")
        }
    }

    @Test func restartBeforeSetup_issuesAFreshCode_andTheOldOneStopsWorking() throws {
        try Self.withStore { store, dir in
            let first = try #require(try store.bootstrap())
            let reopened = try Self.open(dir)
            let second = try #require(try reopened.bootstrap())
            #expect(first != second)
            #expect(throws: HomeError.self) { try reopened.completeSetup(code: first, password: "correct horse") }
            _ = try reopened.completeSetup(code: second, password: "correct horse")
        }
    }

    @Test func secrets_areStoredOnlyAsHashes() throws {
        try Self.withStore { store, dir in
            let code = try #require(try store.bootstrap())
            let admin = try store.completeSetup(code: code, password: "correct horse")
            try store.addUser(username: "mia", password: "member password", role: .member)
            let member = try store.login(username: "mia", password: "member password")
            let (request, secret) = try store.createAppRequest(appName: "Dashboard", deviceTypes: [])
            _ = try store.approve(requestID: request.id, scope: GrantScope(deviceTypes: nil, includeSensitive: false), by: "user:admin")
            let app = try #require(try store.claimToken(requestID: request.id, secret: secret))
            let bytes = try Data(contentsOf: dir.appendingPathComponent("hearth.sqlite"))
                + ((try? Data(contentsOf: dir.appendingPathComponent("hearth.sqlite-wal"))) ?? Data())
            let text = String(decoding: bytes, as: UTF8.self)
            for s in ["correct horse", "member password", admin.token, member.token, app.token, secret, code] {
                #expect(!text.contains(s), "a secret is in the database file in plain text")
            }
        }
    }

    @Test func loginFailures_sayTheSameForUnknownUsersAndWrongPasswords() throws {
        try Self.withStore { store, _ in
            try store.addUser(username: "mia", password: "member password", role: .member)
            let wrong = #expect(throws: HomeError.self) { try store.login(username: "mia", password: "nope nope") }
            let unknown = #expect(throws: HomeError.self) { try store.login(username: "zed", password: "nope nope") }
            #expect(wrong?.code == .unauthenticated)
            #expect(wrong?.message == unknown?.message)
        }
    }

    @Test func usersTokensAndGrants_surviveARestart() throws {
        try Self.withStore { store, dir in
            try store.addUser(username: "mia", password: "member password", role: .member)
            let token = try store.login(username: "mia", password: "member password")
            let (request, secret) = try store.createAppRequest(appName: "Dashboard", deviceTypes: [OnOffLightDeviceType.identifier])
            let scope = GrantScope(deviceTypes: [OnOffLightDeviceType.identifier], includeSensitive: false, canControl: false)
            _ = try store.approve(requestID: request.id, scope: scope, by: "user:admin")
            let app = try #require(try store.claimToken(requestID: request.id, secret: secret))

            let reopened = try Self.open(dir)
            #expect(try reopened.authenticate(token: token.token)?.principal.id == "user:mia")
            let session = try #require(try reopened.authenticate(token: app.token))
            #expect(session.principal.role == .app)
            #expect(session.principal.scope == scope)
            #expect(try reopened.grants().map(\.appName) == ["Dashboard"])
            #expect(throws: HomeError.self) { try reopened.claimToken(requestID: request.id, secret: secret) }

            #expect(try reopened.revokeToken(id: app.id))
            let revoked = #expect(throws: HomeError.self) { try reopened.authenticate(token: app.token) }
            #expect(revoked?.code == .permissionDenied)
            #expect(try reopened.appRequest(id: request.id).status == .revoked)
        }
    }

    @Test func wrongRequestSecret_cannotCollectTheToken() throws {
        try Self.withStore { store, _ in
            let (request, _) = try store.createAppRequest(appName: "Dashboard", deviceTypes: [])
            _ = try store.approve(requestID: request.id, scope: GrantScope(deviceTypes: nil, includeSensitive: false), by: "user:admin")
            let e = #expect(throws: HomeError.self) { try store.claimToken(requestID: request.id, secret: "hreq_guess") }
            #expect(e?.code == .permissionDenied)
        }
    }

    @Test func badUserInput_isRefusedWithAClearMessage() throws {
        try Self.withStore { store, _ in
            #expect(throws: HomeError.self) { try store.addUser(username: "Bad Name", password: "long enough", role: .member) }
            #expect(throws: HomeError.self) { try store.addUser(username: "ok", password: "short", role: .member) }
            try store.addUser(username: "ok", password: "long enough", role: .admin)
            let dup = #expect(throws: HomeError.self) { try store.addUser(username: "ok", password: "long enough", role: .member) }
            #expect(dup?.code == .conflict)
            let last = #expect(throws: HomeError.self) { try store.removeUser("ok") }
            #expect(last?.code == .conflict, "the last admin cannot be removed")
        }
    }

    @Test func pendingAppRequests_areBounded() throws {
        try Self.withStore { store, _ in
            for i in 0..<AccessStore.maxPendingAppRequests { _ = try store.createAppRequest(appName: "App \(i)", deviceTypes: []) }
            let e = #expect(throws: HomeError.self) { try store.createAppRequest(appName: "One too many", deviceTypes: []) }
            #expect(e?.code == .rateLimited)
        }
    }
}

