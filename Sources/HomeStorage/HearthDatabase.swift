import Foundation
public import GRDB
public import HomeModel
import Synchronization

/// Hearth's SQLite database: the layout (structures, rooms), the device registry, and — through
/// ``init(path:extraMigrations:)`` — whatever other modules keep there (users, grants, tokens).
///
/// One file, opened as a GRDB `DatabasePool` in WAL mode with `synchronous = FULL`: every
/// committed transaction survives a crash of the process (and of the machine); a transaction
/// that did not commit is never visible. Schema changes are versioned migrations run in order
/// at open.
///
/// A file that is not a SQLite database, is damaged, or was written by a newer Hearth (it has
/// a migration this build does not know) is refused with ``HomeError`` naming the file and what
/// to do — it is never silently recreated.
///
/// ```swift
/// let db = try HearthDatabase(path: "var/hearth.sqlite")
/// let core = HomeCore(store: db)
/// try core.restore()
/// ```
public final class HearthDatabase: Sendable {
    /// The database file.
    public let path: String
    /// The connection pool (one writer, concurrent readers). Other modules run their own
    /// queries through it.
    public let pool: DatabasePool
    /// Every migration identifier this build knows, in order (Hearth's first, then extras).
    public let knownMigrations: [String]
    /// The migrations this open applied, in order (empty when the schema was current): the
    /// daemon logs them, so an upgrade's schema change shows in the journal.
    public let migrationsAppliedOnOpen: [String]

    /// The last On/Off value written per device (with the core's version), so an unchanged
    /// or stale value costs no write.
    let writtenOutputs = Mutex<[DeviceID: (version: UInt64, value: Bool)]>([:])

    /// Driver registry rows waiting for their transaction (``flushDriverRows()``).
    let driverRows: Mutex<DriverRowBatch>
    /// How long the first queued driver row waits at most before it is written.
    let driverRowWindow: Duration

    /// Opens (creating if needed, with its folder) the database at `path` and migrates it.
    ///
    /// - Parameters:
    ///   - path: the file, e.g. `var/hearth.sqlite`.
    ///   - extraMigrations: registers more migrations after Hearth's own (another module's
    ///     tables). Give them stable, unique identifiers; never change a shipped one.
    ///   - driverRowWindow, driverRowLimit: a driver's registry rows are written together, at
    ///     most `driverRowWindow` after the first of them or once `driverRowLimit` wait
    ///     (``flushDriverRows()``).
    /// - Throws: ``HomeError`` naming the file when it is not a database, is damaged, has a
    ///   newer schema, or cannot be opened.
    public init(
        path: String, extraMigrations: (inout DatabaseMigrator) -> Void = { _ in }, driverRowWindow: Duration = .milliseconds(50),
        driverRowLimit: Int = 256
    ) throws(HomeError) {
        self.path = path
        self.driverRowWindow = driverRowWindow
        driverRows = Mutex(DriverRowBatch(limit: driverRowLimit))
        var migrator = Self.migrator()
        extraMigrations(&migrator)
        knownMigrations = migrator.migrations

        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw .storage("\(path): cannot create the folder \(folder): \(error.localizedDescription)")
            }
        }
        try Self.checkHeader(path)

        var config = Configuration()
        config.busyMode = .timeout(10)
        config.label = "hearth"
        do {
            // Check an existing file read-only first: a damaged or newer file is not written to.
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            if size > 0 {
                var readOnly = config
                readOnly.readonly = true
                let queue = try DatabaseQueue(path: path, configuration: readOnly)
                try queue.read { db in try Self.check(db, migrator: migrator, path: path) }
                try queue.close()
            }
            pool = try DatabasePool(path: path, configuration: config)
            // After GRDB's WAL set-up (which chooses NORMAL): every commit reaches the disk.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            let before = try pool.read { db in
                try Self.check(db, migrator: migrator, path: path)
                return try migrator.appliedIdentifiers(db)
            }
            try migrator.migrate(pool)
            migrationsAppliedOnOpen = migrator.migrations.filter { !before.contains($0) }
        } catch let error as HomeError {
            throw error
        } catch let error as DatabaseError
            where error.resultCode.primaryResultCode == .SQLITE_NOTADB || error.resultCode.primaryResultCode == .SQLITE_CORRUPT
        {
            throw .storage(Self.damaged(path, detail: error.message ?? "\(error.resultCode)"))
        } catch {
            throw .storage("\(path): cannot open the database: \(error)")
        }
    }

    /// Queued driver rows are written before the database goes (nobody is left to see a failure).
    deinit {
        try? flushDriverRows()
    }

    /// Refuses a damaged file, and one with schema steps this build does not know.
    static func check(_ db: Database, migrator: DatabaseMigrator, path: String) throws {
        let check = try String.fetchOne(db, sql: "PRAGMA quick_check")
        guard check == "ok" else {
            throw HomeError.storage(damaged(path, detail: check ?? "integrity check failed"))
        }
        if try migrator.hasBeenSuperseded(db) {
            let unknown = try migrator.appliedIdentifiers(db).subtracting(migrator.migrations).sorted()
            throw HomeError.storage(
                "\(path) was written by a newer version of Hearth (schema steps this version does not know: "
                    + "\(unknown.joined(separator: ", "))). Run the newer Hearth, or move this file away and restore "
                    + "a backup made for this version with `hearth restore --database \(path) --input BACKUP`. "
                    + "The file was not changed.")
        }
    }

    static func damaged(_ path: String, detail: String) -> String {
        "\(path) is not a Hearth database or is damaged (\(detail)). Hearth does not overwrite it: "
            + "restore a backup with `hearth restore --database \(path) --input BACKUP`, "
            + "or move the file away to start with an empty layout."
    }

    /// Refuses a non-empty file that does not start with SQLite's header, before SQLite sees it.
    static func checkHeader(_ path: String) throws(HomeError) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        if header.isEmpty { return }
        if header != Data("SQLite format 3\u{0}".utf8) {
            throw .storage(damaged(path, detail: "the file does not start with a SQLite header"))
        }
    }

    /// Hearth's own migrations, in order. Never edit a shipped one: add the next.
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(Schema.v1) { db in
            try db.execute(
                sql: """
                    CREATE TABLE structure (
                        id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        nameKey TEXT NOT NULL UNIQUE
                    );
                    CREATE TABLE room (
                        id TEXT PRIMARY KEY NOT NULL,
                        structureID TEXT NOT NULL REFERENCES structure(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        nameKey TEXT NOT NULL,
                        UNIQUE (structureID, nameKey)
                    );
                    CREATE TABLE device (
                        id TEXT PRIMARY KEY NOT NULL,
                        pluginID TEXT NOT NULL,
                        localID TEXT NOT NULL,
                        name TEXT NOT NULL,
                        structureID TEXT REFERENCES structure(id) ON DELETE SET NULL,
                        roomID TEXT REFERENCES room(id) ON DELETE SET NULL,
                        commissioning TEXT NOT NULL CHECK (commissioning IN ('discovered', 'commissioned')),
                        manufacturer TEXT,
                        model TEXT,
                        types TEXT NOT NULL,
                        connectivity TEXT NOT NULL,
                        firstSeen INTEGER NOT NULL,
                        lastSeen INTEGER NOT NULL,
                        UNIQUE (pluginID, localID)
                    );
                    CREATE INDEX device_room ON device(roomID);
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    """)
        }
        migrator.registerMigration(Schema.v2) { db in
            try db.execute(
                sql: """
                    ALTER TABLE device ADD COLUMN restoreOnStart TEXT
                        CHECK (restoreOnStart IN ('off', 'on', 'last'));
                    ALTER TABLE device ADD COLUMN lastOnOff INTEGER;
                    """)
        }
        return migrator
    }

    /// Hearth's migration identifiers.
    public enum Schema {
        /// Structures, rooms, the device registry.
        public static let v1 = "hearth-v1-layout"
        /// Restore-on-start for outputs and their last On/Off state.
        public static let v2 = "hearth-v2-outputs"
    }

    /// The migrations applied to the file, in order.
    public func appliedMigrations() throws(HomeError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") }
    }

    // MARK: - Helpers

    func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(HomeError) -> T {
        do {
            return try pool.read(body)
        } catch let error as HomeError {
            throw error
        } catch {
            throw .storage("\(path): cannot read: \(error)")
        }
    }

    func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(HomeError) -> T {
        do {
            return try pool.write(body)
        } catch let error as HomeError {
            throw error
        } catch {
            throw .storage("\(path): cannot save: \(error)")
        }
    }
}

extension HomeError.Code {
    /// The database cannot be opened, read or written (damaged, newer schema, disk full).
    public static let storageFailure = HomeError.Code(rawValue: "storageFailure")
}

extension HomeError {
    static func storage(_ message: String) -> HomeError { HomeError(.storageFailure, message) }
}
