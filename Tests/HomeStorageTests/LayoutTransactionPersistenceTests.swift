import DriverAPI
import Foundation
import HomeCore
import HomeModel
import HashTreeCollections
import HomeStorage
import Synchronization
import Testing

/// Several layout edits as one (`Home.edit([…])`) on a real SQLite file: one transaction, and
/// after a restart either all of them or none.
@Suite struct LayoutTransactionPersistenceTests {
    /// The SQLite store, counting the transactions the core asks for.
    final class CountingStore: LayoutStore, Sendable {
        let db: HearthDatabase
        let transactions = Atomic<Int>(0)
        init(_ db: HearthDatabase) { self.db = db }
        func loadLayout() throws -> (structures: [StructureSnapshot], rooms: [RoomSnapshot], devices: [DeviceSnapshot]) {
            try db.loadLayout()
        }
        func persist(_ delta: LayoutDelta) throws {
            try db.persist(delta)
            transactions.add(1, ordering: .relaxed)
        }
    }

    @Test func refusedBatch_leavesTheFileAsItWas_andAGoodOneSavesBothInOneTransaction() async throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        let store = CountingStore(try HearthDatabase(path: path))
        let core = HomeCore(store: store)
        try core.restore()
        let home = core.home(for: .system)
        core.context(for: "gpio").publish(Harness.relay(hint: CommissionHint(name: "Relay", room: "Kitchen")))
        let relay = DeviceID(plugin: "gpio", local: "relay")
        let kitchen = try #require(core.state.devices[relay]?.roomID)
        let office = try home.createRoom(named: "Office", in: try #require(core.state.devices[relay]?.structureID))
        let before = store.transactions.load(ordering: .relaxed)

        // A rename with a move to a room that does not exist: nothing at all.
        let error = #expect(throws: HomeError.self) {
            try home.edit([.renameDevice(relay, name: "Desk Relay"), .moveDevice(relay, to: "room-nowhere")])
        }
        #expect(error?.code == .notFound)
        #expect(store.transactions.load(ordering: .relaxed) == before)
        var saved = try #require(try Harness(path: path).core.state.devices[relay])
        #expect(saved.name == "Relay")
        #expect(saved.roomID == kitchen)

        // Both, in one transaction.
        try home.edit([.renameDevice(relay, name: "Desk Relay"), .moveDevice(relay, to: office)])
        #expect(store.transactions.load(ordering: .relaxed) == before + 1)
        saved = try #require(try Harness(path: path).core.state.devices[relay])
        #expect(saved.name == "Desk Relay")
        #expect(saved.roomID == office)
    }
}
