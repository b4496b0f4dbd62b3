import DriverAPI
import Foundation
import GRDB
@testable import HomeStorage
import HomeCore
import HomeModel
import Testing

/// A fresh temporary folder per test; the database file lives in it.
struct TempDir {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-storage-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

@Suite struct MigrationTests {
    @Test func freshFile_getsEverySchemaStep_inOrder_andWAL() throws {
        let dir = TempDir()
        let db = try HearthDatabase(path: dir.path("var/hearth.sqlite"))
        #expect(try db.appliedMigrations() == [HearthDatabase.Schema.v1, HearthDatabase.Schema.v2])
        let mode = try db.pool.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        let synchronous = try db.pool.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        #expect(synchronous == 2, "commits must be synchronous = FULL")
    }
}

extension MigrationTests {
    @Test func olderFile_isMigrated_keepingItsLayout() throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        do {
            // A file as the first version left it: only the first schema step, with a room.
            let queue = try DatabaseQueue(path: path)
            try HearthDatabase.migrator().migrate(queue, upTo: HearthDatabase.Schema.v1)
            try queue.write { db in
                try db.execute(sql: "INSERT INTO structure (id, name, nameKey) VALUES ('s1', 'Home', 'home')")
                try db.execute(sql: "INSERT INTO room (id, structureID, name, nameKey) VALUES ('r1', 's1', 'Kitchen', 'kitchen')")
            }
        }
        let db = try HearthDatabase(path: path)
        #expect(try db.appliedMigrations() == [HearthDatabase.Schema.v1, HearthDatabase.Schema.v2])
        let layout = try db.loadLayout()
        #expect(layout.structures == [StructureSnapshot(id: "s1", name: "Home")])
        #expect(layout.rooms == [RoomSnapshot(id: "r1", structureID: "s1", name: "Kitchen")])
        let columns = try db.pool.read { try $0.columns(in: "device").map(\.name) }
        #expect(columns.contains("restoreOnStart") && columns.contains("lastOnOff"))
    }

    @Test func extraMigrations_runAfterHearths_andAreKnown() throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        let db = try HearthDatabase(path: path) { migrator in
            migrator.registerMigration("users-v1") { db in
                try db.execute(sql: "CREATE TABLE user (id TEXT PRIMARY KEY NOT NULL)")
            }
        }
        #expect(try db.appliedMigrations() == [HearthDatabase.Schema.v1, HearthDatabase.Schema.v2, "users-v1"])
        #expect(try db.pool.read { try $0.tableExists("user") })
        #expect(db.knownMigrations.last == "users-v1")
    }

    @Test func newerSchema_isRefused_namingTheFile_andLeftUntouched() throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        do {
            let db = try HearthDatabase(path: path)
            try db.pool.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('hearth-v99-future')")
                try db.execute(sql: "INSERT INTO structure (id, name, nameKey) VALUES ('s1', 'Home', 'home')")
            }
        }
        let error = #expect(throws: HomeError.self) { try HearthDatabase(path: path) }
        #expect(error?.code == .storageFailure)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("newer version of Hearth") == true)
        #expect(error?.message.contains("hearth-v99-future") == true)
        // Not recreated: the row and the future step are still there.
        let queue = try DatabaseQueue(path: path)
        #expect(try queue.read { try String.fetchAll($0, sql: "SELECT id FROM structure") } == ["s1"])
        #expect(try queue.read { try String.fetchSet($0, sql: "SELECT identifier FROM grdb_migrations") }.contains("hearth-v99-future"))
    }
}
