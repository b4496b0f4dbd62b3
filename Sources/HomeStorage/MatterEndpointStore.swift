public import GRDB
public import HomeModel

/// The Matter bridge's endpoint numbers for the home's devices, in SQLite (migration
/// `matter-endpoints-v1`): one row per key (a device's bridged node, or one of its device
/// types), so a device keeps its endpoints across restarts and a controller's view stays valid.
///
/// Rows are never deleted: a removed device's numbers stay taken, so a controller that cached
/// one never sees it reused for another device (Matter Core Specification 9.12.2: a bridge
/// SHALL NOT reuse the endpoint of a removed bridged device). Numbers come from a counter that
/// only grows.
///
/// ```swift
/// let db = try HearthDatabase(path: path, extraMigrations: MatterEndpointStore.registerMigrations(in:))
/// let numbers = try db.matterEndpointStore().assign(["gpio:door", "gpio:door#0x0015"], first: 2)
/// ```
public final class MatterEndpointStore: Sendable {
    let writer: any DatabaseWriter

    public init(writer: any DatabaseWriter) { self.writer = writer }

    /// Adds the endpoint table (identifiers prefixed `matter-endpoints-`).
    public static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("matter-endpoints-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE matter_bridged_endpoint (
                        key TEXT PRIMARY KEY NOT NULL,
                        endpoint INTEGER NOT NULL UNIQUE
                    );
                    CREATE TABLE matter_bridged_endpoint_next (
                        id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                        next INTEGER NOT NULL
                    );
                    """)
        }
    }

    /// Every number handed out so far, by key (removed devices' included).
    public func all() throws(HomeError) -> [String: UInt16] {
        do {
            return try writer.read { db in
                var out: [String: UInt16] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT key, endpoint FROM matter_bridged_endpoint") {
                    let n: Int64 = row["endpoint"]
                    out[row["key"]] = UInt16(truncatingIfNeeded: n)
                }
                return out
            }
        } catch {
            throw .internal("the Matter endpoint table could not be read: \(error)")
        }
    }

    /// The numbers of `keys`: the ones already held, and new ones (from `first` on, never one
    /// handed out before) for the rest, saved in one transaction.
    ///
    /// - Throws: ``HomeError`` `.conflict` when the 16-bit endpoint
    ///   space is used up (0xFFFF is reserved), `.internal` when SQLite fails.
    public func assign(_ keys: [String], first: UInt16) throws(HomeError) -> [String: UInt16] {
        do {
            return try writer.write { db in
                var known: [String: UInt16] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT key, endpoint FROM matter_bridged_endpoint") {
                    let n: Int64 = row["endpoint"]
                    known[row["key"]] = UInt16(truncatingIfNeeded: n)
                }
                let stored = try Int64.fetchOne(db, sql: "SELECT next FROM matter_bridged_endpoint_next WHERE id = 1")
                let highest = known.values.max().map { Int64($0) + 1 } ?? 0
                var next = max(stored ?? 0, highest, Int64(first))
                var out: [String: UInt16] = [:]
                var added = false
                for key in keys {
                    if let n = known[key] {
                        out[key] = n
                        continue
                    }
                    guard next < 0xFFFF else { throw EndpointSpaceExhausted() }
                    try db.execute(sql: "INSERT INTO matter_bridged_endpoint (key, endpoint) VALUES (?, ?)", arguments: [key, next])
                    known[key] = UInt16(next)
                    out[key] = UInt16(next)
                    next += 1
                    added = true
                }
                if added {
                    try db.execute(
                        sql: "INSERT INTO matter_bridged_endpoint_next (id, next) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET next = excluded.next",
                        arguments: [next])
                }
                return out
            }
        } catch is EndpointSpaceExhausted {
            throw .conflict("every Matter endpoint number (up to 0xFFFE) has been handed out; the bridge cannot add more devices")
        } catch {
            throw .internal("the Matter endpoint table could not be saved: \(error)")
        }
    }

    struct EndpointSpaceExhausted: Error {}
}

extension HearthDatabase {
    /// The Matter endpoint-number store on this database. Open the database with
    /// `extraMigrations: MatterEndpointStore.registerMigrations(in:)` so its tables exist.
    public func matterEndpointStore() -> MatterEndpointStore { MatterEndpointStore(writer: pool) }
}
