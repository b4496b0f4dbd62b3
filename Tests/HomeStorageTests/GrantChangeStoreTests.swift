import Foundation
import GRDB
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Permission changes (`presentPermissionsUpdate`) in a real SQLite file: linked to the grant
/// they change, decided once, an approval changing the grant in the same transaction, and a
/// database from before them migrated in place.
@Suite struct GrantChangeStoreTests {
    static let lights = GrantScope(deviceTypes: [OnOffLightDeviceType.identifier], includeSensitive: false, canControl: true)

    static func grant(_ store: AccessStore, _ name: String = "Dashboard", strict: Bool? = nil) throws -> IssuedToken {
        let (request, secret) = try store.createAppRequest(appName: name, deviceTypes: [])
        _ = try store.approve(requestID: request.id, scope: lights, by: "user:admin")
        return try #require(try store.claimToken(requestID: request.id, secret: secret, strictOperationValidation: strict))
    }

    @Test func approving_changesTheLinkedGrant_andKeepsTheAppsValidationMode() throws {
        try AccessStoreTests.withStore { store, dir in
            let token = try Self.grant(store, strict: false)
            let change = try store.requestGrantChange(grantID: token.id, deviceTypes: [ContactSensorDeviceType.identifier])
            #expect(change.status == .pending && change.grantID == token.id && change.appName == "Dashboard")
            #expect(try store.grantChanges(pendingOnly: true).map(\.id) == [change.id])

            let asked = change.askedScope(from: Self.lights)
            let decided = try store.approveGrantChange(id: change.id, scope: asked, by: "user:admin")
            #expect(decided.status == .approved && decided.decidedBy == "user:admin")
            #expect(decided.scope?.deviceTypes == [ContactSensorDeviceType.identifier])
            let grant = try #require(try store.grants(includeRevoked: false).first { $0.id == token.id })
            #expect(grant.scope.deviceTypes == [ContactSensorDeviceType.identifier])
            #expect(grant.scope.strictOperationValidation == false, "the app's own choice survives the change")
            #expect(try store.authenticate(token: token.token)?.principal.scope?.deviceTypes == [ContactSensorDeviceType.identifier])
            #expect(try store.grantChanges(pendingOnly: true).isEmpty)

            #expect(throws: HomeError.conflict("permission change \(change.id) was already decided (approved)")) {
                try store.denyGrantChange(id: change.id, by: "user:admin")
            }
            // Still there after a restart, with its link.
            let reopened = try AccessStoreTests.open(dir)
            #expect(try reopened.grantChange(id: change.id).grantID == token.id)
            #expect(try reopened.grantChange(id: change.id).status == .approved)
        }
    }

    @Test func denying_leavesTheGrant_andANewRequestSupersedesAPendingOne() throws {
        try AccessStoreTests.withStore { store, _ in
            let token = try Self.grant(store)
            let first = try store.requestGrantChange(grantID: token.id, deviceTypes: [])
            let second = try store.requestGrantChange(grantID: token.id, deviceTypes: [DoorLockDeviceType.identifier])
            #expect(try store.grantChange(id: first.id).status == .superseded)
            #expect(try store.grantChanges(pendingOnly: true).map(\.id) == [second.id])
            #expect(throws: HomeError.self) { try store.approveGrantChange(id: first.id, scope: Self.lights, by: "user:admin") }

            #expect(try store.denyGrantChange(id: second.id, by: "user:admin").status == .denied)
            #expect(try store.grants(includeRevoked: false).first?.scope == Self.lights, "a denial changes nothing")
        }
    }

    @Test func revokingTheGrant_cancelsItsPendingChange_andRevokedGrantsCannotAsk() throws {
        try AccessStoreTests.withStore { store, _ in
            let token = try Self.grant(store)
            let other = try Self.grant(store, "Wall Panel")
            let change = try store.requestGrantChange(grantID: token.id, deviceTypes: [])
            let kept = try store.requestGrantChange(grantID: other.id, deviceTypes: [])
            #expect(try store.revokeToken(id: token.id))
            #expect(try store.grantChange(id: change.id).status == .cancelled)
            #expect(try store.grantChange(id: kept.id).status == .pending, "another app's change is not touched")
            #expect(throws: HomeError.notFound("no live grant \(token.id)")) {
                try store.requestGrantChange(grantID: token.id, deviceTypes: [])
            }
            let userToken = try { () throws -> IssuedToken in
                try store.addUser(username: "mia", password: "member password", role: .member)
                return try store.login(username: "mia", password: "member password")
            }()
            #expect(throws: HomeError.self, "a person's token is not a grant") {
                try store.requestGrantChange(grantID: userToken.id, deviceTypes: [])
            }
        }
    }

    /// A database written before permission changes existed (only `access-v1`) opens, gets the
    /// new table, and its live grant can ask for a change.
    @Test func migration_addsTheTable_toADatabaseWithGrants() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("hearth.sqlite").path
        do {
            let pool = try DatabasePool(path: path)
            var migrator = DatabaseMigrator()
            AccessStore.registerMigrations(in: &migrator)
            try migrator.migrate(pool, upTo: "access-v1")
            #expect(try pool.read { try $0.tableExists("access_grant_changes") } == false)
            let old = AccessStore(writer: pool, passwordRounds: 1_000)
            let (request, secret) = try old.createAppRequest(appName: "Old App", deviceTypes: [])
            _ = try old.approve(requestID: request.id, scope: Self.lights, by: "user:admin")
            _ = try old.claimToken(requestID: request.id, secret: secret)
        }
        let store = try AccessStoreTests.open(dir)
        let grant = try #require(try store.grants(includeRevoked: false).first)
        let change = try store.requestGrantChange(grantID: grant.id, deviceTypes: [])
        #expect(try store.approveGrantChange(id: change.id, scope: change.askedScope(from: grant.scope), by: "user:admin").scope?.deviceTypes == nil)
        #expect(try store.grants(includeRevoked: false).first?.scope.deviceTypes == nil, "approved as asked: every device type")
    }

    /// The pure transitions, without storage.
    @Test func decide_movesOnlyAPendingChange() throws {
        var change = GrantChange(
            id: "chg-1", grantID: "tok-1", appName: "A", requestedDeviceTypes: [], status: .pending, scope: nil, decidedBy: nil, createdAt: Date())
        try change.decide(.denied)
        #expect(change.status == .denied)
        #expect(throws: HomeError.self) { try change.decide(.approved) }
        #expect(change.status == .denied)
    }
}
