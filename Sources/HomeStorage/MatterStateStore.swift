import Foundation
public import GRDB
public import MatterCommissioning

/// The Matter node's persistent state (MatterCommissioning's ``MatterStore``) in SQLite: fabrics
/// with their certificates and operational keys, the ACL, a pending fail-safe rollback,
/// persisted counters and the bridged endpoint numbers. Each save is one transaction.
///
/// The database then holds private keys: ``HearthDatabase/matterStore()`` makes its files 0600.
///
/// ```swift
/// let db = try HearthDatabase(path: path, extraMigrations: MatterStateStore.registerMigrations(in:))
/// let node = try CommissioningNode(store: try db.matterStore(), attestation: credentials)
/// ```
public final class MatterStateStore: MatterStore {
    let writer: any DatabaseWriter

    public init(writer: any DatabaseWriter) { self.writer = writer }

    /// Adds the Matter tables (identifiers prefixed `matter-`).
    public static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("matter-v1") { db in
            let fabricColumns = """
                fabric_index INTEGER PRIMARY KEY NOT NULL,
                root BLOB NOT NULL, noc BLOB NOT NULL, icac BLOB,
                operational_key BLOB NOT NULL, epoch_ipk BLOB NOT NULL,
                vendor_id INTEGER NOT NULL, label TEXT NOT NULL
                """
            try db.execute(
                sql: """
                    CREATE TABLE matter_fabric (\(fabricColumns));
                    CREATE TABLE matter_fabric_before_update (\(fabricColumns));
                    CREATE TABLE matter_acl (
                        position INTEGER PRIMARY KEY NOT NULL,
                        fabric_index INTEGER NOT NULL, privilege INTEGER NOT NULL, auth_mode INTEGER NOT NULL,
                        subjects TEXT NOT NULL, targets TEXT NOT NULL
                    );
                    CREATE TABLE matter_failsafe (
                        id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                        added_fabric INTEGER
                    );
                    CREATE TABLE matter_counter (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
                    CREATE TABLE matter_endpoint (device_id TEXT PRIMARY KEY NOT NULL, endpoint INTEGER NOT NULL UNIQUE);
                    """)
        }
        migrator.registerMigration("matter-v3-resumption") { db in
            try db.execute(
                sql: """
                    CREATE TABLE matter_resumption (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        resumption_id BLOB NOT NULL UNIQUE, shared_secret BLOB NOT NULL,
                        peer_node_id INTEGER NOT NULL, fabric_index INTEGER NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("matter-v2-onboarding") { db in
            try db.execute(
                sql: """
                    CREATE TABLE matter_onboarding (
                        id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                        passcode INTEGER NOT NULL, discriminator INTEGER NOT NULL, salt BLOB NOT NULL, iterations INTEGER NOT NULL,
                        dac_key BLOB NOT NULL, dac BLOB NOT NULL, cd BLOB NOT NULL
                    );
                    """)
        }
    }

    static let endpointNextCounter = "endpoint.next"

    // MARK: Commissioning

    public func loadCommissioning() throws(MatterStoreError) -> PersistentCommissioning {
        try run("read the Matter fabrics") { () throws -> PersistentCommissioning in
            try writer.read { db in
                let fabrics = try Row.fetchAll(db, sql: "SELECT * FROM matter_fabric ORDER BY fabric_index").map(Self.fabric)
                let acl = try Row.fetchAll(db, sql: "SELECT * FROM matter_acl ORDER BY position").map(Self.entry)
                var rollback: FailSafeRollback?
                if let row = try Row.fetchOne(db, sql: "SELECT added_fabric FROM matter_failsafe WHERE id = 1") {
                    let added: Int64? = row["added_fabric"]
                    let before = try Row.fetchOne(db, sql: "SELECT * FROM matter_fabric_before_update").map(Self.fabric)
                    rollback = FailSafeRollback(addedFabric: added.map { FabricIndex(truncatingIfNeeded: $0) }, fabricBeforeUpdate: before)
                }
                return PersistentCommissioning(fabrics: fabrics, accessControl: acl, pendingRollback: rollback)
            }
        }
    }

    public func saveCommissioning(_ state: PersistentCommissioning) throws(MatterStoreError) {
        try run("save the Matter fabrics") {
            try writer.write { db in
                try db.execute(sql: "DELETE FROM matter_fabric; DELETE FROM matter_fabric_before_update; DELETE FROM matter_acl; DELETE FROM matter_failsafe")
                for fabric in state.fabrics { try Self.insert(fabric, into: "matter_fabric", db) }
                for (position, entry) in state.accessControl.enumerated() {
                    try db.execute(
                        sql: "INSERT INTO matter_acl (position, fabric_index, privilege, auth_mode, subjects, targets) VALUES (?, ?, ?, ?, ?, ?)",
                        arguments: [position, Int64(entry.fabricIndex), Int64(entry.privilege.rawValue), Int64(entry.authMode.rawValue),
                                    entry.subjects.map { String($0) }.joined(separator: ","), Self.encode(entry.targets)])
                }
                if let rollback = state.pendingRollback {
                    try db.execute(sql: "INSERT INTO matter_failsafe (id, added_fabric) VALUES (1, ?)", arguments: [rollback.addedFabric.map { Int64($0) }])
                    if let before = rollback.fabricBeforeUpdate { try Self.insert(before, into: "matter_fabric_before_update", db) }
                }
            }
        }
    }

    static func insert(_ f: FabricInfo, into table: String, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO \(table) (fabric_index, root, noc, icac, operational_key, epoch_ipk, vendor_id, label) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            arguments: [Int64(f.index), Data(f.rootCertificate), Data(f.noc), f.icac.map { Data($0) }, Data(f.operationalKey), Data(f.epochIPK),
                        Int64(f.vendorID), f.label])
    }

    static func fabric(_ row: Row) throws -> FabricInfo {
        let index: Int64 = row["fabric_index"], vendor: Int64 = row["vendor_id"]
        let root: Data = row["root"], noc: Data = row["noc"], icac: Data? = row["icac"]
        let key: Data = row["operational_key"], ipk: Data = row["epoch_ipk"]
        return try FabricInfo(index: FabricIndex(truncatingIfNeeded: index), rootCertificate: Array(root), noc: Array(noc), icac: icac.map { Array($0) },
                              operationalKey: Array(key), epochIPK: Array(ipk), vendorID: UInt16(truncatingIfNeeded: vendor), label: row["label"])
    }

    static func entry(_ row: Row) throws -> AccessControlEntry {
        let fabric: Int64 = row["fabric_index"], privilege: Int64 = row["privilege"], mode: Int64 = row["auth_mode"]
        let subjects: String = row["subjects"], targets: String = row["targets"]
        guard let p = Privilege(rawValue: UInt8(truncatingIfNeeded: privilege)), let m = AuthMode(rawValue: UInt8(truncatingIfNeeded: mode)) else {
            throw MatterStoreError("an ACL row has an unknown privilege or auth mode")
        }
        return AccessControlEntry(privilege: p, authMode: m, subjects: subjects.split(separator: ",").compactMap { UInt64($0) },
                                  targets: decode(targets), fabricIndex: FabricIndex(truncatingIfNeeded: fabric))
    }

    /// Targets as `cluster:endpoint:deviceType` per target, `;`-separated, empty fields for null.
    static func encode(_ targets: [AccessControlTarget]) -> String {
        targets.map { t in [t.cluster.map { String($0) }, t.endpoint.map { String($0) }, t.deviceType.map { String($0) }].map { $0 ?? "" }.joined(separator: ":") }
            .joined(separator: ";")
    }

    static func decode(_ text: String) -> [AccessControlTarget] {
        text.split(separator: ";").map { part in
            let f = part.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            func field(_ i: Int) -> String? { i < f.count && !f[i].isEmpty ? f[i] : nil }
            return AccessControlTarget(cluster: field(0).flatMap { UInt32($0) }, endpoint: field(1).flatMap { UInt16($0) },
                                       deviceType: field(2).flatMap { UInt32($0) })
        }
    }

    // MARK: Counters and endpoints

    public func loadCounter(_ name: String) throws(MatterStoreError) -> UInt32? {
        try run("read counter \(name)") {
            try writer.read { db in try Int64.fetchOne(db, sql: "SELECT value FROM matter_counter WHERE name = ?", arguments: [name]) }
                .map { UInt32(truncatingIfNeeded: $0) }
        }
    }

    public func saveCounter(_ name: String, _ value: UInt32) throws(MatterStoreError) {
        try run("save counter \(name)") {
            try writer.write { db in
                try db.execute(sql: "INSERT INTO matter_counter (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                               arguments: [name, Int64(value)])
            }
        }
    }

    public func loadEndpoints() throws(MatterStoreError) -> EndpointMap {
        let rows = try run("read the endpoint map") {
            try writer.read { db in
                try Row.fetchAll(db, sql: "SELECT device_id, endpoint FROM matter_endpoint").map { row -> (String, Int64) in
                    (row["device_id"], row["endpoint"])
                }
            }
        }
        let next = try loadCounter(Self.endpointNextCounter)
        return EndpointMap(endpoints: Dictionary(uniqueKeysWithValues: rows.map { ($0.0, UInt16(truncatingIfNeeded: $0.1)) }),
                           next: next.map { UInt16(truncatingIfNeeded: $0) })
    }

    public func saveEndpoints(_ map: EndpointMap) throws(MatterStoreError) {
        try run("save the endpoint map") {
            try writer.write { db in
                try db.execute(sql: "DELETE FROM matter_endpoint")
                for (device, endpoint) in map.endpoints.sorted(by: { $0.value < $1.value }) {
                    try db.execute(sql: "INSERT INTO matter_endpoint (device_id, endpoint) VALUES (?, ?)", arguments: [device, Int64(endpoint)])
                }
                try db.execute(sql: "INSERT INTO matter_counter (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                               arguments: [Self.endpointNextCounter, Int64(map.next)])
            }
        }
    }

    func run<T>(_ what: String, _ body: () throws -> T) throws(MatterStoreError) -> T {
        do { return try body() } catch let error as MatterStoreError { throw error } catch {
            throw MatterStoreError("could not \(what): \(error)")
        }
    }
}

/// CASE resumption records (MatterCommissioning's ``ResumptionStore``), one row per peer and
/// fabric, the newest few per fabric.
extension MatterStateStore: ResumptionStore {
    public func loadResumptions() throws(MatterStoreError) -> [StoredResumption] {
        try run("read the Matter resumption records") {
            try writer.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM matter_resumption ORDER BY seq").map { row in
                    StoredResumption(resumptionID: [UInt8](row["resumption_id"] as Data), sharedSecret: [UInt8](row["shared_secret"] as Data),
                                     peerNodeID: UInt64(bitPattern: row["peer_node_id"] as Int64),
                                     fabricIndex: UInt8(truncatingIfNeeded: row["fabric_index"] as Int64))
                }
            }
        }
    }

    public func saveResumption(_ r: StoredResumption, keepPerFabric: Int) throws(MatterStoreError) {
        try run("save a Matter resumption record") {
            try writer.write { db in
                let peer = Int64(bitPattern: r.peerNodeID), fabric = Int64(r.fabricIndex)
                try db.execute(sql: "DELETE FROM matter_resumption WHERE (peer_node_id = ? AND fabric_index = ?) OR resumption_id = ?",
                               arguments: [peer, fabric, Data(r.resumptionID)])
                try db.execute(sql: "INSERT INTO matter_resumption (resumption_id, shared_secret, peer_node_id, fabric_index) VALUES (?, ?, ?, ?)",
                               arguments: [Data(r.resumptionID), Data(r.sharedSecret), peer, fabric])
                try db.execute(
                    sql: """
                        DELETE FROM matter_resumption WHERE fabric_index = ? AND seq NOT IN
                            (SELECT seq FROM matter_resumption WHERE fabric_index = ? ORDER BY seq DESC LIMIT ?)
                        """,
                    arguments: [fabric, fabric, Int64(max(1, keepPerFabric))])
            }
        }
    }

    public func deleteResumptions(keeping fabrics: Set<UInt8>) throws(MatterStoreError) {
        try run("delete Matter resumption records") {
            try writer.write { db in
                let kept = fabrics.sorted().map { String($0) }.joined(separator: ",")
                try db.execute(sql: "DELETE FROM matter_resumption WHERE fabric_index NOT IN (\(kept.isEmpty ? "-1" : kept))")
            }
        }
    }
}

extension MatterStateStore: OnboardingStore {
    public func loadOnboarding() throws(MatterStoreError) -> OnboardingSecrets? {
        try run("read the Matter onboarding secrets") { () throws -> OnboardingSecrets? in
            try writer.read { db in
                try Row.fetchOne(db, sql: "SELECT * FROM matter_onboarding WHERE id = 1").map { row in
                    OnboardingSecrets(
                        passcode: UInt32(row["passcode"] as Int64), discriminator: UInt16(row["discriminator"] as Int64),
                        salt: [UInt8](row["salt"] as Data), iterations: Int(row["iterations"] as Int64),
                        dacKey: [UInt8](row["dac_key"] as Data), dacCertificate: [UInt8](row["dac"] as Data),
                        certificationDeclaration: [UInt8](row["cd"] as Data))
                }
            }
        }
    }

    public func saveOnboarding(_ s: OnboardingSecrets) throws(MatterStoreError) {
        try run("save the Matter onboarding secrets") { () throws in
            try writer.write { db in
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO matter_onboarding (id, passcode, discriminator, salt, iterations, dac_key, dac, cd)
                        VALUES (1, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [Int64(s.passcode), Int64(s.discriminator), Data(s.salt), Int64(s.iterations), Data(s.dacKey),
                                Data(s.dacCertificate), Data(s.certificationDeclaration)])
            }
        }
    }
}

extension HearthDatabase {
    /// The Matter store on this database. Open the database with
    /// `extraMigrations: MatterStateStore.registerMigrations(in:)` so its tables exist. The
    /// database will hold operational private keys, so its files are made 0600 here.
    /// - Throws: when the permissions cannot be set.
    public func matterStore() throws(MatterStoreError) -> MatterStateStore {
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            do { try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file) } catch {
                throw MatterStoreError("\(file): cannot restrict to 0600: \(error)")
            }
        }
        return MatterStateStore(writer: pool)
    }
}
