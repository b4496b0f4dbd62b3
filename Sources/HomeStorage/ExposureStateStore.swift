public import Foundation
public import GRDB
public import HomeCore
public import HomeModel

/// The exposure policy an admin saved (HomeCore's ``ExposureStore``), in SQLite.
///
/// One row per door: `all` is the shared policy every door reads (the only one today); a row
/// per door leaves room for a door-specific override later without another migration.
///
/// ```swift
/// let db = try HearthDatabase(path: path, extraMigrations: ExposureStateStore.registerMigrations(in:))
/// let settings = try ExposureSettings(configured: fromYAML, store: db.exposureStore())
/// ```
public final class ExposureStateStore: ExposureStore {
    let writer: any DatabaseWriter
    let door: String
    let now: @Sendable () -> Date

    public init(writer: any DatabaseWriter, door: String = "all", now: @escaping @Sendable () -> Date = { Date() }) {
        self.writer = writer
        self.door = door
        self.now = now
    }

    /// Adds the exposure table (identifiers prefixed `exposure-`).
    public static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("exposure-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE exposure_policy (
                        door TEXT PRIMARY KEY NOT NULL,
                        policy TEXT NOT NULL,
                        updated_by TEXT NOT NULL,
                        updated_at DOUBLE NOT NULL
                    );
                    """)
        }
    }

    public func loadExposurePolicy() throws(HomeError) -> ExposurePolicy? {
        let door = self.door
        let text: String?
        do {
            text = try writer.read { db in try String.fetchOne(db, sql: "SELECT policy FROM exposure_policy WHERE door = ?", arguments: [door]) }
        } catch {
            throw .internal("the exposure table could not be read: \(error)")
        }
        guard let text else { return nil }
        do {
            return try JSONDecoder().decode(ExposurePolicy.self, from: Data(text.utf8))
        } catch {
            throw .internal("the database holds an exposure policy this build cannot read (\(error)); reset it with 'hearth exposure reset'")
        }
    }

    /// Who saved the policy and when (nil when none is saved).
    public func lastEdit() throws(HomeError) -> (by: String, at: Date)? {
        let door = self.door
        do {
            let row: (String, Double)? = try writer.read { db in
                guard let row = try Row.fetchOne(db, sql: "SELECT updated_by, updated_at FROM exposure_policy WHERE door = ?", arguments: [door])
                else { return nil }
                let by: String = row["updated_by"]
                let at: Double = row["updated_at"]
                return (by, at)
            }
            return row.map { (by: $0.0, at: Date(timeIntervalSince1970: $0.1)) }
        } catch {
            throw .internal("the exposure table could not be read: \(error)")
        }
    }

    public func saveExposurePolicy(_ policy: ExposurePolicy?, by principal: String) throws(HomeError) {
        let door = self.door
        let at = now().timeIntervalSince1970
        let text: String?
        if let policy {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            do {
                text = String(decoding: try encoder.encode(policy), as: UTF8.self)
            } catch {
                throw .internal("could not encode the exposure policy: \(error)")
            }
        } else {
            text = nil
        }
        do {
            try writer.write { db in
                if let text {
                    try db.execute(
                        sql: """
                            INSERT INTO exposure_policy (door, policy, updated_by, updated_at) VALUES (?, ?, ?, ?)
                            ON CONFLICT(door) DO UPDATE SET policy = excluded.policy, updated_by = excluded.updated_by,
                                updated_at = excluded.updated_at
                            """, arguments: [door, text, principal, at])
                } else {
                    try db.execute(sql: "DELETE FROM exposure_policy WHERE door = ?", arguments: [door])
                }
            }
        } catch {
            throw .internal("the exposure policy could not be saved: \(error)")
        }
    }
}

extension HearthDatabase {
    /// The exposure store on this database. Open the database with
    /// `extraMigrations: ExposureStateStore.registerMigrations(in:)` so its table exists.
    public func exposureStore() -> ExposureStateStore { ExposureStateStore(writer: pool) }
}
