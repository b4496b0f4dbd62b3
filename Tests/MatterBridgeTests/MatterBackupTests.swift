import Foundation
import HomeStorage
import MatterCommissioning
import Testing

/// `hearthd backup` then `hearthd restore` carry the Matter bridge's state file: the fabric with
/// its NOC and operational key, the ACL and the counters come back byte for byte (so every
/// controller stays paired), the files are 0600, and a stale WAL at the target is not replayed.
@Suite struct MatterBackupTests {
    @Test func restoreIntoAFreshFolder_keepsFabricsKeysAndCounters() throws {
        let root = NSTemporaryDirectory() + "matter-backup-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for d in ["old", "saved", "new"] { try FileManager.default.createDirectory(atPath: root + "/" + d, withIntermediateDirectories: true) }
        let oldDB = root + "/old/hearth.sqlite"
        let newDB = root + "/new/hearth.sqlite"
        #expect(try MatterBackup.save(database: oldDB, output: root + "/saved/backup.json") == nil, "no Matter state: nothing saved")

        let before: PersistentCommissioning
        do {
            let db = try HearthDatabase(path: MatterBackup.defaultPath(database: oldDB), extraMigrations: MatterStateStore.registerMigrations(in:))
            let store = try db.matterStore()
            try TestFabric(fabricID: 0xFAB1).install(in: store, bridgeNode: 0x1234, admin: 0x5678)
            try store.saveCounter("global-unencrypted", 4242)
            before = try store.loadCommissioning()
        }
        #expect(before.fabrics.count == 1)

        let saved = try #require(try MatterBackup.save(database: oldDB, output: root + "/saved/backup.json"))
        #expect(saved == root + "/saved/backup.json.matter.sqlite")
        #expect(try FileManager.default.attributesOfItem(atPath: saved)[.posixPermissions] as? Int == 0o600)

        // A leftover WAL beside the target (another installation's) must not be replayed over the copy.
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: root + "/new/matter.sqlite-wal"))
        let restored = try #require(try MatterBackup.restore(database: newDB, input: root + "/saved/backup.json"))
        #expect(restored == saved)
        let state = MatterBackup.defaultPath(database: newDB)
        #expect(try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int == 0o600)
        let db = try HearthDatabase(path: state, extraMigrations: MatterStateStore.registerMigrations(in:))
        let back = try db.matterStore()
        #expect(try back.loadCommissioning() == before, "the same fabric, NOC, operational key and ACL")
        #expect(try back.loadCounter("global-unencrypted") == 4242)
    }

    /// `matter.state` naming a file outside the database's folder: `--matter-state` is used.
    @Test func anExplicitStateFile_isTheOneCarried() throws {
        let root = NSTemporaryDirectory() + "matter-backup-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/elsewhere", withIntermediateDirectories: true)
        let state = root + "/elsewhere/bridge.sqlite"
        do {
            let db = try HearthDatabase(path: state, extraMigrations: MatterStateStore.registerMigrations(in:))
            try db.matterStore().saveCounter("c", 7)
        }
        #expect(try MatterBackup.save(database: root + "/hearth.sqlite", output: root + "/b.json") == nil)
        let saved = try #require(try MatterBackup.save(database: root + "/hearth.sqlite", output: root + "/b.json", state: state))
        let target = root + "/elsewhere/restored.sqlite"
        #expect(try MatterBackup.restore(database: root + "/hearth.sqlite", input: root + "/b.json", state: target) == saved)
        let db = try HearthDatabase(path: target, extraMigrations: MatterStateStore.registerMigrations(in:))
        #expect(try db.matterStore().loadCounter("c") == 7)
    }
}
