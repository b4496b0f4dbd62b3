import Foundation
import HAP
@testable import HAPBridge
import Testing

/// `hearthd backup` then `hearthd restore` into a fresh database (another folder, nothing there
/// before, as on a new SD card): the iPhones stay paired and every accessory keeps its aid/iid.
@Suite struct HAPBackupTests {
    @Test func restoreIntoAFreshDatabase_keepsPairingsAidsIIDsAndPlacement() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hap-backup-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for d in ["old", "saved", "new"] { try FileManager.default.createDirectory(atPath: root + "/" + d, withIntermediateDirectories: true) }
        let oldDB = root + "/old/hearth.sqlite"
        let newDB = root + "/new/hearth.sqlite"

        // The running house: two bridges, paired phones, aids/iids, placement and c#.
        let first = try HAPStateStore(path: HAPStateStore.defaultPath(database: oldDB))
        let identity = try first.identity(setupCode: "031-45-154")
        try first.savePairing(Pairing(identifier: "iphone", publicKey: [UInt8](repeating: 1, count: 32), isAdmin: true))
        try first.savePairing(Pairing(identifier: "ipad", publicKey: [UInt8](repeating: 2, count: 32), isAdmin: false))
        let aids = try first.aids(for: ["gpio:front-door", "gpio:pump", "mqtt:lamp"])
        try first.saveIIDs(aid: aids["gpio:pump"]!, ["info": 1, "switch": 8, "switch.on": 9])
        try first.saveBridgeAssignments(["gpio:front-door": 0, "gpio:pump": 0, "mqtt:lamp": 0, "mqtt:far": 1])
        let configNumber = try first.configurationNumber(accessorySet: "layout-1")
        let second = try HAPStateStore(path: HAPStateStore.path(bridge: 1, first: HAPStateStore.defaultPath(database: oldDB)))
        let identity2 = try second.identity()
        try second.savePairing(Pairing(identifier: "iphone", publicKey: [UInt8](repeating: 1, count: 32), isAdmin: true))
        let aids2 = try second.aids(for: ["mqtt:far"])

        let saved = try #require(try HAPBackup.save(database: oldDB, output: root + "/saved/backup.json"))
        #expect(try FileManager.default.attributesOfItem(atPath: saved)[.posixPermissions] as? Int == 0o600)
        #expect(!FileManager.default.fileExists(atPath: HAPStateStore.defaultPath(database: newDB)))

        let restored = try #require(try HAPBackup.restore(database: newDB, input: root + "/saved/backup.json"))
        #expect(restored == saved)
        let statePath = HAPStateStore.defaultPath(database: newDB)
        #expect(statePath == root + "/new/hap.sqlite")
        #expect(try FileManager.default.attributesOfItem(atPath: statePath)[.posixPermissions] as? Int == 0o600)
        let back = try HAPStateStore(path: statePath)
        let backID = try back.identity()
        // The same accessory identity: the iPhone's pair-verify checks this key and pairing ID.
        #expect(backID.pairingID == identity.pairingID && backID.signingKeyBytes == identity.signingKeyBytes && backID.setupCode == "031-45-154")
        #expect(try back.loadPairings().map(\.identifier).sorted() == ["ipad", "iphone"])
        #expect(try back.loadPairings().first { $0.identifier == "iphone" }?.isAdmin == true)
        // The same aids (in any order, plus a new device getting a new one) and iids.
        let backAids = try back.aids(for: ["mqtt:lamp", "gpio:pump", "gpio:front-door", "mqtt:new"])
        #expect(backAids.filter { $0.key != "mqtt:new" } == aids)
        #expect(!aids.values.contains(backAids["mqtt:new"]!))
        #expect(try back.iids(aid: aids["gpio:pump"]!) == ["info": 1, "switch": 8, "switch.on": 9])
        #expect(try back.bridgeAssignments() == ["gpio:front-door": 0, "gpio:pump": 0, "mqtt:lamp": 0, "mqtt:far": 1])
        #expect(try back.configurationNumber(accessorySet: "layout-1") == configNumber)
        // The second bridge's state came along beside it.
        let back2 = try HAPStateStore(path: root + "/new/hap-2.sqlite")
        #expect(try back2.identity().pairingID == identity2.pairingID)
        #expect(try back2.aids(for: ["mqtt:far"]) == aids2)
        #expect(try back2.loadPairings().map(\.identifier) == ["iphone"])
    }

    /// `hap.state` naming a file outside the database's folder: `hearthd backup --hap-state` and
    /// `restore --hap-state` carry that file (and a second bridge's beside it), not a default one.
    @Test func aStateFileOutsideTheDatabaseFolder_isSavedAndRestoredWhereItIsNamed() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hap-backup-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for d in ["db", "keys", "saved", "newdb", "newkeys"] { try FileManager.default.createDirectory(atPath: root + "/" + d, withIntermediateDirectories: true) }
        let state = root + "/keys/homekit.sqlite"
        let store = try HAPStateStore(path: state)
        let identity = try store.identity(setupCode: "031-45-154")
        try store.savePairing(Pairing(identifier: "iphone", publicKey: [UInt8](repeating: 1, count: 32), isAdmin: true))
        let second = try HAPStateStore(path: HAPStateStore.path(bridge: 1, first: state))
        let identity2 = try second.identity()

        // Nothing beside the database: without the path the backup has no HAP state to carry.
        #expect(try HAPBackup.save(database: root + "/db/hearth.sqlite", output: root + "/saved/a.json") == nil)
        let saved = try #require(try HAPBackup.save(database: root + "/db/hearth.sqlite", output: root + "/saved/b.json", state: state))
        #expect(try FileManager.default.attributesOfItem(atPath: saved)[.posixPermissions] as? Int == 0o600)

        let newState = root + "/newkeys/homekit.sqlite"
        #expect(try HAPBackup.restore(database: root + "/newdb/hearth.sqlite", input: root + "/saved/b.json", state: newState) == saved)
        #expect(!FileManager.default.fileExists(atPath: root + "/newdb/hap.sqlite"), "restored where hap.state names, not beside the database")
        let back = try HAPStateStore(path: newState)
        #expect(try back.identity().pairingID == identity.pairingID)
        #expect(try back.loadPairings().map(\.identifier) == ["iphone"])
        #expect(try HAPStateStore(path: HAPStateStore.path(bridge: 1, first: newState)).identity().pairingID == identity2.pairingID)
    }
}
