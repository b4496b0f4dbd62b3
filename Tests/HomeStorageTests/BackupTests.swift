import DriverAPI
import Foundation
import GRDB
import HomeCore
import HomeModel
@testable import HomeStorage
import Testing

@Suite struct BackupTests {
    static func populated(_ dir: TempDir) throws -> Harness {
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        let kitchen = try h.home.createRoom(named: "Kitchen", in: home)
        h.context().publish(Harness.relay(on: true))
        h.context().publish(Harness.door())
        try h.home.commission(DeviceID(plugin: "gpio", local: "relay"), name: "Pump", structure: home, room: kitchen)
        try h.db.setRestoreOnStart(.last, for: DeviceID(plugin: "gpio", local: "relay"))
        return h
    }

    @Test func backupThenRestore_intoAnotherFile_givesTheSameLayout() async throws {
        let dir = TempDir()
        let h = try Self.populated(dir)
        let file = dir.path("layout.json")
        try h.db.backup(to: file)

        let target = try HearthDatabase(path: dir.path("other.sqlite"))
        try target.restore(try target.readBackup(file))
        let a = try h.db.loadLayout()
        let b = try target.loadLayout()
        #expect(a.structures == b.structures)
        #expect(a.rooms == b.rooms)
        #expect(a.devices == b.devices)
        #expect(try target.registry() == h.db.registry())

        // And a core started on it shows the commissioned device in its room.
        let core = HomeCore(store: target)
        try core.restore()
        let devices = try await core.home(for: .system).devices().list()
        #expect(devices.map(\.name) == ["Pump"])
        #expect(try await core.home(for: .system).discoveredDevices().list().map(\.name) == ["Door"])
    }

    @Test func restore_replacesWhatWasThere() throws {
        let dir = TempDir()
        let h = try Self.populated(dir)
        let file = dir.path("layout.json")
        try h.db.backup(to: file)
        try h.home.createStructure(named: "Cabin")
        #expect(try h.db.loadLayout().structures.count == 2)
        try h.db.restore(try h.db.readBackup(file))
        #expect(try h.db.loadLayout().structures.map(\.name) == ["Home"])
    }

    @Test func backupFromANewerSchema_isRefused() throws {
        let dir = TempDir()
        let h = try Self.populated(dir)
        var export = try h.db.exportLayout()
        export.schema.append("hearth-v99-future")
        let file = dir.path("future.json")
        try JSONEncoder().encode(export).write(to: URL(fileURLWithPath: file))
        let error = #expect(throws: HomeError.self) { try h.db.readBackup(file) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains(file) == true)
        #expect(error?.message.contains("hearth-v99-future") == true)
    }

    @Test func aContradictoryBackup_isRefused_andTheDatabaseIsLeftAsItWas() throws {
        let dir = TempDir()
        let h = try Self.populated(dir)
        var export = try h.db.exportLayout()
        export.rooms.append(RoomSnapshot(id: "room-x", structureID: "structure-missing", name: "Nowhere"))
        let before = try h.db.registry()
        let error = #expect(throws: HomeError.self) { try h.db.restore(export) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("structure-missing") == true)
        #expect(try h.db.registry() == before)
        #expect(try h.db.loadLayout().rooms.map(\.name) == ["Kitchen"])
    }

    @Test func notABackup_isRefused_namingTheFile() throws {
        let dir = TempDir()
        let db = try HearthDatabase(path: dir.path("hearth.sqlite"))
        let file = dir.path("notes.json")
        try Data("{\"hello\": 1}".utf8).write(to: URL(fileURLWithPath: file))
        let error = #expect(throws: HomeError.self) { try db.readBackup(file) }
        #expect(error?.message.contains(file) == true)
        #expect(error?.message.contains("not a Hearth layout backup") == true)
    }
}
