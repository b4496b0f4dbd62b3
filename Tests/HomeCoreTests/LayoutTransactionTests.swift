import DriverAPI
import HomeCore
import HomeModel
import HashTreeCollections
import Synchronization
import Testing

/// Several layout edits as one: all or nothing, one version, one save.
@Suite struct LayoutTransactionTests {
    let store = RecordingStore()
    let core: HomeCore
    let lamp = DeviceID(plugin: "p", local: "lamp")
    var home: Home { core.home(for: .system) }

    init() throws {
        core = HomeCore(store: store)
        core.context(for: "p").publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        store.deltas.withLock { $0.removeAll() }
    }

    var kitchen: RoomID { core.state.devices[lamp]!.roomID! }

    @Test func renameWithAMoveToAMissingRoom_changesNothing_andSavesNothing() throws {
        let before = core.state
        #expect(throws: HomeError.notFound("no room room-missing")) {
            try home.edit([.renameDevice(lamp, name: "Desk Lamp"), .moveDevice(lamp, to: "room-missing")])
        }
        #expect(core.state.devices[lamp]?.name == "Lamp")
        #expect(core.state.devices[lamp]?.roomID == kitchen)
        #expect(core.state.version == before.version)
        #expect(store.deltas.withLock { $0.isEmpty })
    }

    @Test func aRefusedRename_doesNotMoveTheDeviceEither() throws {
        let office = try home.createRoom(named: "Office", in: core.state.devices[lamp]!.structureID!)
        store.deltas.withLock { $0.removeAll() }
        #expect(throws: HomeError.self) { try home.edit([.moveDevice(lamp, to: office), .renameDevice(lamp, name: "Lamp 💡")]) }
        #expect(core.state.devices[lamp]?.roomID == kitchen)
        #expect(store.deltas.withLock { $0.isEmpty })
    }

    @Test func renameAndMove_areOneVersion_andOneSave() async throws {
        let office = try home.createRoom(named: "Office", in: core.state.devices[lamp]!.structureID!)
        store.deltas.withLock { $0.removeAll() }
        let version = core.state.version
        var changes = home.changes().makeAsyncIterator()
        try home.edit([.renameDevice(lamp, name: "Desk Lamp"), .moveDevice(lamp, to: office)])
        #expect(core.state.version == version + 1)
        #expect(core.state.devices[lamp]?.name == "Desk Lamp")
        #expect(core.state.devices[lamp]?.roomID == office)
        let deltas = store.deltas.withLock { $0 }
        #expect(deltas.count == 1)
        #expect(deltas.first?.upserted.map(\.id) == [lamp])
        #expect(deltas.first?.upserted.first?.name == "Desk Lamp")
        #expect(deltas.first?.upserted.first?.roomID == office)
        let change = try #require(await changes.next())
        #expect(change.version == version + 1)
        #expect(change.devices == [lamp: .shape])
    }

    @Test func aMemberCannotEditEvenInABatch() throws {
        let member = core.home(for: Principal(id: "user:bob", role: .member))
        #expect(throws: HomeError.self) { try member.edit([.renameDevice(lamp, name: "Desk Lamp")]) }
        #expect(core.state.devices[lamp]?.name == "Lamp")
    }
}
