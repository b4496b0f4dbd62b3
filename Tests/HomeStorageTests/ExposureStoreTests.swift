import Foundation
import GRDB
import HomeCore
import HomeModel
import HomeStorage
import Testing

@Suite struct ExposureStoreTests {
    func tempPath() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-exposure-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("hearth.sqlite").path
    }

    func open(_ path: String) throws -> HearthDatabase {
        try HearthDatabase(path: path) { migrator in
            AccessStore.registerMigrations(in: &migrator)
            ExposureStateStore.registerMigrations(in: &migrator)
        }
    }

    @Test func anAdminsPolicySurvivesARestartAndResetForgetsIt() throws {
        let path = try tempPath()
        var policy = ExposurePolicy(rooms: ["room-garage"], devices: ["gpio:lock"])
        policy.excludedDeviceTypes = [TemperatureSensorDeviceType.identifier]
        policy.allowControl = false
        do {
            let db = try open(path)
            #expect(db.migrationsAppliedOnOpen.contains("exposure-v1"))
            let store = db.exposureStore()
            #expect(try store.loadExposurePolicy() == nil)
            try store.saveExposurePolicy(policy, by: "user:admin")
        }
        let db = try open(path)
        #expect(db.migrationsAppliedOnOpen.isEmpty)
        let store = db.exposureStore()
        #expect(try store.loadExposurePolicy() == policy)
        #expect(try store.lastEdit()?.by == "user:admin")
        let settings = try ExposureSettings(configured: .default, store: store)
        #expect(settings.source == .admin)
        try settings.reset(by: Principal(id: "user:admin", role: .admin))
        #expect(try store.loadExposurePolicy() == nil)
        #expect(try open(path).exposureStore().loadExposurePolicy() == nil)
    }

    /// An existing database (layout and access tables, no exposure table) gets the table on
    /// open and keeps what it had.
    @Test func migratesADatabaseWithoutTheTable() throws {
        let path = try tempPath()
        do {
            let old = try HearthDatabase(path: path, extraMigrations: AccessStore.registerMigrations(in:))
            #expect(!old.migrationsAppliedOnOpen.contains("exposure-v1"))
            _ = try old.accessStore(passwordRounds: 1000).bootstrap()
        }
        let db = try open(path)
        #expect(db.migrationsAppliedOnOpen == ["exposure-v1"])
        #expect(try db.accessStore(passwordRounds: 1000).users().count == 1)
        #expect(try db.exposureStore().loadExposurePolicy() == nil)
    }

    @Test func aPolicyThisBuildCannotReadIsAnErrorNotADefault() throws {
        let path = try tempPath()
        let db = try open(path)
        try db.pool.write { db in
            try db.execute(sql: "INSERT INTO exposure_policy VALUES ('all', '{\"rooms\": 3}', 'x', 0)")
        }
        #expect(throws: HomeError.self) { try db.exposureStore().loadExposurePolicy() }
    }
}
