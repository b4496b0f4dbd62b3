import DriverAPI
import Foundation
import GRDB
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Each layout operation through the core, on a real SQLite file, then a restart (a new
/// connection and core over the same file) that must show the same layout.
@Suite struct LayoutPersistenceTests {
    @Test func structures_createRenameDelete_surviveRestart() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        let cabin = try h.home.createStructure(named: "Cabin")
        try h.home.edit(.renameStructure(cabin, name: "Lake  House"))
        let gone = try h.home.createStructure(named: "Garage")
        try h.home.edit(.deleteStructure(gone))

        let r = try h.restarted()
        let structures = try await r.home.structures().list().sorted { $0.name < $1.name }
        #expect(structures.map(\.name) == ["Home", "Lake House"])
        #expect(Set(structures.map(\.id)) == [home, cabin])
    }

    @Test func structureNames_areUniqueAfterNormalisation_andARefusedEditLeavesTheFileAlone() throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        try h.home.createStructure(named: "Grandma's House")
        let error = #expect(throws: HomeError.self) { try h.home.createStructure(named: "grandmas   house") }
        #expect(error?.code == .conflict)
        let invalid = #expect(throws: HomeError.self) { try h.home.createStructure(named: "-Shed-") }
        #expect(invalid?.code == .invalidArgument)
        #expect(invalid?.message.contains("start with a letter or a digit") == true)
        #expect(try h.db.loadLayout().structures.map(\.name) == ["Grandma's House"])
    }

    @Test func rooms_createRenameDelete_uniquePerStructure_surviveRestart() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        let cabin = try h.home.createStructure(named: "Cabin")
        let kitchen = try h.home.createRoom(named: "Kitchen", in: home)
        // The same name in another structure is fine; in the same one it is not.
        let cabinKitchen = try h.home.createRoom(named: "kitchen", in: cabin)
        let clash = #expect(throws: HomeError.self) { try h.home.createRoom(named: "KITCHEN", in: home) }
        #expect(clash?.code == .conflict)
        let den = try h.home.createRoom(named: "Den", in: home)
        try h.home.edit(.renameRoom(den, name: "Study"))
        let attic = try h.home.createRoom(named: "Attic", in: home)
        try h.home.edit(.deleteRoom(attic))

        let r = try h.restarted()
        let rooms = try await r.home.rooms().list()
        #expect(Set(rooms.map { "\($0.structureID.rawValue)/\($0.name)" }) == ["\(home)/Kitchen", "\(cabin)/kitchen", "\(home)/Study"])
        #expect(Set(rooms.map(\.id)) == [kitchen, cabinKitchen, den])
    }

    @Test func deletingARoom_leavesItsDevicesUnassigned_nothingLost() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        let shed = try h.home.createRoom(named: "Shed", in: home)
        h.context().publish(Harness.relay())
        let relay = DeviceID(plugin: "gpio", local: "relay")
        try h.home.commission(relay, name: "Pump", structure: home, room: shed)
        try h.home.edit(.deleteRoom(shed))

        let r = try h.restarted()
        let device = try #require(try await r.home.devices().list().first)
        #expect(device.id == relay)
        #expect(device.name == "Pump")
        #expect(device.snapshot.roomID == nil)
        #expect(device.snapshot.structureID == home)
        #expect(device.snapshot.commissioning == .commissioned)
        #expect(try await r.home.rooms().list().isEmpty)
    }

    @Test func setName_returnsTheUpdatedDevice_andMoveAssignsARoom_bothSurviveRestart() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        let hall = try h.home.createRoom(named: "Hall", in: home)
        let porch = try h.home.createRoom(named: "Porch", in: home)
        h.context().publish(Harness.door())
        let door = DeviceID(plugin: "gpio", local: "door")
        try h.home.commission(door, name: "Door", structure: home, room: hall)

        let renamed = try await h.home.setName(device: door, name: "  Front   door ")
        #expect(renamed.name == "Front door")
        #expect(renamed.id == door)
        try h.home.edit(.moveDevice(door, to: porch))
        let bad = #expect(throws: HomeError.self) { try h.home.edit(.renameDevice(door, name: "Door 🚪")) }
        #expect(bad?.message.contains("emoji") == true)

        let r = try h.restarted()
        let device = try r.home.currentDevice(id: door)
        #expect(device.name == "Front door")
        #expect(device.snapshot.roomID == porch)
    }

    @Test func members_cannotEditTheLayout_andTheFileIsUnchanged() throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let error = #expect(throws: HomeError.self) { try h.member.createStructure(named: "Home") }
        #expect(error?.code == .permissionDenied)
        #expect(try h.db.loadLayout().structures.isEmpty)
    }

    @Test func aStoreThatCannotWrite_refusesTheEdit_andNothingBecomesVisible() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        // Another connection makes the room table refuse writes (as a full or read-only disk would).
        let other = try HearthDatabase(path: h.path)
        try await other.pool.write { db in
            try db.execute(sql: "CREATE TRIGGER no_rooms BEFORE INSERT ON room BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
        }
        let error = #expect(throws: HomeError.self) { try h.home.createRoom(named: "Kitchen", in: home) }
        #expect(error?.code == .internal)
        #expect(error?.message.contains("could not save") == true)
        #expect(try await h.home.rooms().list().isEmpty)
    }
}
