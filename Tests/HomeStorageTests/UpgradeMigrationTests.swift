import Foundation
import GRDB
import HomeStorage
import Testing

/// What an upgrade sees: the migrations an open applied (hearthd logs them).
@Suite struct UpgradeMigrationTests {
    @Test func first_open_applies_every_migration_and_a_reopen_none() throws {
        let dir = TempDir()
        defer { try? FileManager.default.removeItem(at: dir.url) }
        let first = try HearthDatabase(path: dir.path("hearth.sqlite"))
        #expect(first.migrationsAppliedOnOpen == first.knownMigrations)
        #expect(!first.migrationsAppliedOnOpen.isEmpty)
        try first.pool.close()
        let again = try HearthDatabase(path: dir.path("hearth.sqlite"))
        #expect(again.migrationsAppliedOnOpen.isEmpty)
    }

    @Test func an_upgrade_applies_only_the_new_migrations() throws {
        let dir = TempDir()
        defer { try? FileManager.default.removeItem(at: dir.url) }
        // The previous release: Hearth's own tables only.
        let old = try HearthDatabase(path: dir.path("hearth.sqlite"))
        try old.pool.close()
        // This release adds a table through another module's migration.
        let new = try HearthDatabase(path: dir.path("hearth.sqlite")) { migrator in
            migrator.registerMigration("test-v1-notes") { db in try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY)") }
        }
        #expect(new.migrationsAppliedOnOpen == ["test-v1-notes"])
    }
}
