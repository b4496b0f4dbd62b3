import Crypto
import Foundation
import GRDB
public import HAP

/// The HAP bridge's state in its own SQLite file (mode 0600: it holds the accessory's private
/// key and the controllers' keys): the identity, pairings, the unsuccessful-attempt counter,
/// aid per device and iid per (aid, key), and the configuration number `c#`.
public final class HAPStateStore: PairingStore, Sendable {
    let queue: DatabaseQueue
    public let path: String

    /// Opens (creating) the file and sets its mode to 0600.
    public init(path: String) throws {
        self.path = path
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) {
            _ = fm.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        var config = Configuration()
        config.journalMode = .default
        queue = try DatabaseQueue(path: path, configuration: config)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("hap-v1") { db in
            try db.execute(sql: """
                CREATE TABLE hap_identity (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    pairing_id TEXT NOT NULL, private_key BLOB NOT NULL, setup_code TEXT NOT NULL, setup_id TEXT NOT NULL,
                    config_number INTEGER NOT NULL, accessory_set TEXT NOT NULL, failed_attempts INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE hap_pairing (identifier TEXT PRIMARY KEY NOT NULL, public_key BLOB NOT NULL, admin INTEGER NOT NULL);
                CREATE TABLE hap_aid (device TEXT PRIMARY KEY NOT NULL, aid INTEGER NOT NULL UNIQUE);
                CREATE TABLE hap_iid (aid INTEGER NOT NULL, key TEXT NOT NULL, iid INTEGER NOT NULL, PRIMARY KEY (aid, key));
                """)
        }
        // Which bridge serves which device when more than 149 are exposed (kept in the first
        // bridge's file; a device stays on its bridge).
        migrator.registerMigration("hap-v2-bridges") { db in
            try db.execute(sql: "CREATE TABLE hap_bridge_device (device TEXT PRIMARY KEY NOT NULL, bridge INTEGER NOT NULL)")
        }
        try migrator.migrate(queue)
        // SQLite's journal and WAL side files are created with the database's mode by SQLite itself.
    }

    /// The saved identity, or a new one saved now.
    public func identity(setupCode: String? = nil) throws -> AccessoryIdentity {
        try queue.write { db in
            if let row = try Row.fetchOne(db, sql: "SELECT * FROM hap_identity WHERE id = 1") {
                let key = try Curve25519.Signing.PrivateKey(rawRepresentation: row["private_key"] as Data)
                var identity = AccessoryIdentity(pairingID: row["pairing_id"], signingKey: key, setupCode: row["setup_code"], setupID: row["setup_id"])
                if let setupCode, setupCode != identity.setupCode {
                    identity.setupCode = setupCode
                    try db.execute(sql: "UPDATE hap_identity SET setup_code = ? WHERE id = 1", arguments: [setupCode])
                }
                return identity
            }
            var identity = AccessoryIdentity.generate()
            if let setupCode { identity.setupCode = setupCode }
            try db.execute(
                sql: "INSERT INTO hap_identity (id, pairing_id, private_key, setup_code, setup_id, config_number, accessory_set) VALUES (1, ?, ?, ?, ?, 1, '')",
                arguments: [identity.pairingID, identity.signingKey.rawRepresentation, identity.setupCode, identity.setupID])
            return identity
        }
    }

    public func loadPairings() throws -> [Pairing] {
        try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM hap_pairing ORDER BY identifier").map {
                Pairing(identifier: $0["identifier"], publicKey: Array($0["public_key"] as Data), isAdmin: ($0["admin"] as Int) == 1)
            }
        }
    }

    public func savePairing(_ pairing: Pairing) throws {
        try queue.write { db in
            try db.execute(
                sql: "INSERT INTO hap_pairing (identifier, public_key, admin) VALUES (?, ?, ?) ON CONFLICT(identifier) DO UPDATE SET public_key = excluded.public_key, admin = excluded.admin",
                arguments: [pairing.identifier, Data(pairing.publicKey), pairing.isAdmin ? 1 : 0])
        }
    }

    public func removePairing(identifier: String) throws {
        try queue.write { db in try db.execute(sql: "DELETE FROM hap_pairing WHERE identifier = ?", arguments: [identifier]) }
    }

    public func loadFailedAttempts() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT failed_attempts FROM hap_identity WHERE id = 1") ?? 0 }
    }

    public func saveFailedAttempts(_ count: Int) throws {
        try queue.write { db in try db.execute(sql: "UPDATE hap_identity SET failed_attempts = ? WHERE id = 1", arguments: [count]) }
    }

    /// aid per device (the bridge is 1; devices from 2), allocating for new devices.
    public func aids(for devices: [String]) throws -> [String: Int] {
        try queue.write { db in
            var out: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT device, aid FROM hap_aid") { out[row["device"]] = row["aid"] }
            var next = max(1, out.values.max() ?? 1) + 1
            for d in devices where out[d] == nil {
                try db.execute(sql: "INSERT INTO hap_aid (device, aid) VALUES (?, ?)", arguments: [d, next])
                out[d] = next
                next += 1
            }
            return out
        }
    }

    public func iids(aid: Int) throws -> [String: Int] {
        try queue.read { db in
            var out: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT key, iid FROM hap_iid WHERE aid = ?", arguments: [aid]) { out[row["key"]] = row["iid"] }
            return out
        }
    }

    public func saveIIDs(aid: Int, _ added: [String: Int]) throws {
        guard !added.isEmpty else { return }
        try queue.write { db in
            for (k, v) in added {
                try db.execute(sql: "INSERT OR IGNORE INTO hap_iid (aid, key, iid) VALUES (?, ?, ?)", arguments: [aid, k, v])
            }
        }
    }

    /// The `c#` in force (1 before any layout was recorded).
    public func currentConfigurationNumber() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT config_number FROM hap_identity WHERE id = 1") ?? 1 }
    }

    /// The bridge per device (0 is the first bridge), as assigned so far.
    public func bridgeAssignments() throws -> [String: Int] {
        try queue.read { db in
            var out: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT device, bridge FROM hap_bridge_device") { out[row["device"]] = row["bridge"] }
            return out
        }
    }

    public func saveBridgeAssignments(_ added: [String: Int]) throws {
        guard !added.isEmpty else { return }
        try queue.write { db in
            for (d, b) in added {
                try db.execute(sql: "INSERT OR REPLACE INTO hap_bridge_device (device, bridge) VALUES (?, ?)", arguments: [d, b])
            }
        }
    }

    /// `c#`: bumped when the accessory layout's hash changes; returns the number in force.
    /// `formerly`: what earlier versions kept instead of the hash (the layout as text): equal to
    /// it is no change, and the hash replaces it.
    public func configurationNumber(accessorySet fingerprint: String, formerly: String? = nil) throws -> Int {
        try queue.write { db in
            let row = try Row.fetchOne(db, sql: "SELECT config_number, accessory_set FROM hap_identity WHERE id = 1")
            var n: Int = row?["config_number"] ?? 1
            let old: String = row?["accessory_set"] ?? ""
            if old != fingerprint {
                if let formerly, old == formerly {
                    try db.execute(sql: "UPDATE hap_identity SET accessory_set = ? WHERE id = 1", arguments: [fingerprint])
                    return n
                }
                if !old.isEmpty { n = n >= 65535 ? 1 : n + 1 }
                try db.execute(sql: "UPDATE hap_identity SET config_number = ?, accessory_set = ? WHERE id = 1", arguments: [n, fingerprint])
            }
            return n
        }
    }
}

extension HAPStateStore {
    /// The state file of bridge `index` (0: `path` itself; 1: `hap-2.sqlite` beside it, …).
    public static func path(bridge index: Int, first path: String) -> String {
        guard index > 0 else { return path }
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension
        let base = url.deletingPathExtension().lastPathComponent + "-\(index + 1)"
        return url.deletingLastPathComponent().appendingPathComponent(ext.isEmpty ? base : base + "." + ext).path
    }

    /// The state files of the extra bridges that exist beside `path` (index ≥ 1).
    public static func extraBridgePaths(first path: String) -> [(index: Int, path: String)] {
        (1..<HAPBridgeGroup.maxBridges).map { ($0, Self.path(bridge: $0, first: path)) }.filter { FileManager.default.fileExists(atPath: $0.1) }
    }

    /// The state file `hearthd backup` and `restore` carry beside the layout backup: `<backup>.hap.sqlite`.
    public static func backupPath(for backup: String) -> String { backup + ".hap.sqlite" }

    /// The default state file beside a database (what `hap.state` defaults to).
    public static func defaultPath(database: String) -> String {
        ((database as NSString).deletingLastPathComponent as NSString).appendingPathComponent("hap.sqlite")
    }

    /// Copies the state (one consistent snapshot, safe while hearthd runs) to `path`, mode 0600.
    public func backup(to path: String) throws {
        let fm = FileManager.default
        try? fm.removeItem(atPath: path)
        _ = fm.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        let target = try DatabaseQueue(path: path)
        try queue.backup(to: target)
        try target.close()
        try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    /// Replaces the state file at `path` with a backup's (hearthd stopped), mode 0600: the
    /// iPhones stay paired with the restored bridge.
    public static func restore(from backup: String, to path: String) throws {
        let source = try HAPStateStore(path: backup)
        try source.backup(to: path)
    }
}

/// `hearthd backup` / `restore`: the HAP state beside the layout, when there is one.
public enum HAPBackup {
    /// Saves the state file (`state`, or `<database dir>/hap.sqlite` when `hap.state` names
    /// none) to `<output>.hap.sqlite`; returns that path, or nil when there is no HAP state.
    public static func save(database: String, output: String, state: String? = nil) throws -> String? {
        let state = state ?? HAPStateStore.defaultPath(database: database)
        guard FileManager.default.fileExists(atPath: state) else { return nil }
        let target = HAPStateStore.backupPath(for: output)
        try HAPStateStore(path: state).backup(to: target)
        for (index, extra) in HAPStateStore.extraBridgePaths(first: state) {
            try HAPStateStore(path: extra).backup(to: HAPStateStore.path(bridge: index, first: target))
        }
        return target
    }

    /// Restores `<input>.hap.sqlite` to the state file (`state`, or `<database dir>/hap.sqlite`);
    /// returns the source, or nil when the backup has none.
    public static func restore(database: String, input: String, state: String? = nil) throws -> String? {
        let source = HAPStateStore.backupPath(for: input)
        guard FileManager.default.fileExists(atPath: source) else { return nil }
        let state = state ?? HAPStateStore.defaultPath(database: database)
        try HAPStateStore.restore(from: source, to: state)
        for (index, extra) in HAPStateStore.extraBridgePaths(first: source) {
            try HAPStateStore.restore(from: extra, to: HAPStateStore.path(bridge: index, first: state))
        }
        return source
    }
}
