import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Synchronization
import Testing

@Suite struct ExposurePolicyTests {
    let catalog = Catalog.standard

    func device(
        _ id: DeviceID, room: RoomID? = "kitchen", commissioned: Bool = true, types: [DeviceTypeID]
    ) -> DeviceSnapshot {
        DeviceSnapshot(
            id: id, name: id.localID, structureID: "home", roomID: room, commissioning: commissioned ? .commissioned : .discovered,
            types: types.enumerated().map { DeviceTypeState(id: $1, isPrimary: $0 == 0, traits: [:]) })
    }

    var lamp: DeviceSnapshot { device("gpio:lamp", types: [OnOffLightDeviceType.identifier]) }
    var lock: DeviceSnapshot { device("gpio:lock", room: "hall", types: [DoorLockDeviceType.identifier]) }
    var multi: DeviceSnapshot {
        device("gpio:multi", room: "garage", types: [TemperatureSensorDeviceType.identifier, HumiditySensorDeviceType.identifier])
    }

    @Test func defaultExposesEveryCommissionedNonSensitiveDevice() {
        let p = ExposurePolicy.default
        #expect(p.verdict(for: lamp, catalog: catalog) == .exposed)
        #expect(p.verdict(for: multi, catalog: catalog) == .exposed)
        #expect(p.verdict(for: lock, catalog: catalog) == .sensitive)
        #expect(p.verdict(for: device("gpio:new", commissioned: false, types: [OnOffLightDeviceType.identifier]), catalog: catalog) == .notCommissioned)
        #expect(p.view(of: lock, catalog: catalog) == nil)
        #expect(p.view(of: lamp, catalog: catalog) == lamp)
    }

    @Test func sensitiveDevicesOnlyWhenOptedIn() {
        var all = ExposurePolicy()
        all.includeSensitive = true
        #expect(all.verdict(for: lock, catalog: catalog) == .exposed)
        var one = ExposurePolicy()
        one.devices = ["gpio:lock"]
        #expect(one.verdict(for: lock, catalog: catalog) == .exposed)
        // Listing a device selects only it: the lamp is not selected then.
        #expect(one.verdict(for: lamp, catalog: catalog) == .notSelected)
        var other = ExposurePolicy()
        other.rooms = ["hall"]
        #expect(other.verdict(for: lock, catalog: catalog) == .sensitive, "selecting its room is not an opt-in")
    }

    @Test func selectionByRoomTypeOrIDIsAUnion() {
        var p = ExposurePolicy()
        p.rooms = ["garage"]
        p.deviceTypes = [OnOffLightDeviceType.identifier]
        #expect(p.exposes(multi, catalog: catalog))
        #expect(p.exposes(lamp, catalog: catalog))
        #expect(!p.exposes(device("gpio:t", room: "attic", types: [TemperatureSensorDeviceType.identifier]), catalog: catalog))
        p.devices = ["gpio:t"]
        #expect(p.exposes(device("gpio:t", room: "attic", types: [TemperatureSensorDeviceType.identifier]), catalog: catalog))
    }

    @Test func exclusionsWinOverSelection() {
        var p = ExposurePolicy()
        p.devices = ["gpio:lamp"]
        p.excludedDevices = ["gpio:lamp"]
        #expect(p.verdict(for: lamp, catalog: catalog) == .excludedDevice)
        var q = ExposurePolicy()
        q.excludedRooms = ["kitchen"]
        #expect(q.verdict(for: lamp, catalog: catalog) == .excludedRoom)
        #expect(q.exposes(multi, catalog: catalog))
    }

    @Test func excludedTypesAreRemovedAndThePrimaryMoves() throws {
        var p = ExposurePolicy()
        p.excludedDeviceTypes = [TemperatureSensorDeviceType.identifier]
        let view = try #require(p.view(of: multi, catalog: catalog))
        #expect(view.types.map(\.id) == [HumiditySensorDeviceType.identifier])
        #expect(view.types[0].isPrimary)
        p.excludedDeviceTypes.insert(HumiditySensorDeviceType.identifier)
        #expect(p.verdict(for: multi, catalog: catalog) == .noTypeLeft)
    }

    @Test func roundTripsThroughJSON() throws {
        var p = ExposurePolicy(rooms: ["a"], deviceTypes: [DoorLockDeviceType.identifier], devices: ["x:y"], includeSensitive: true, allowControl: false)
        p.excludedDevices = ["x:z"]
        let data = try JSONEncoder().encode(p)
        #expect(try JSONDecoder().decode(ExposurePolicy.self, from: data) == p)
    }

    @Test func principalCarriesTheGrant() {
        var p = ExposurePolicy()
        p.allowControl = false
        let principal = p.principal(door: "mqtt")
        #expect(principal.id == "exposure:mqtt")
        #expect(principal.role == .app)
        #expect(principal.scope?.canControl == false)
        #expect(principal.scope?.includeSensitive == false)
        p.devices = ["gpio:lock"]
        #expect(p.principal(door: "mqtt").scope?.includeSensitive == true)
    }

    /// The core enforces the door's grant: a read-only export cannot switch the lamp, and a
    /// default export does not even see the lock.
    @Test func theCoreEnforcesTheDoorsGrant() async throws {
        let core = HomeCore()
        let driver = core.context(for: "p")
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.publish(Fixtures.lock(commission: CommissionHint(name: "Front Door", room: "Hall")))
        core.setCommandHandler(FakeLampHardware(context: driver), for: "p")
        var readOnly = ExposurePolicy()
        readOnly.allowControl = false
        let request = CommandRequest(
            device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        await #expect(throws: HomeError.self) { _ = try await core.home(for: readOnly.principal(door: "mqtt")).invoke(request) }
        _ = try await core.home(for: ExposurePolicy().principal(door: "mqtt")).invoke(request)
        let seen = try await core.home(for: ExposurePolicy().principal(door: "mqtt")).devices().list().map(\.id)
        #expect(seen == ["p:lamp"])
    }
}

/// An in-memory store that can be told to fail.
final class MemoryExposureStore: ExposureStore {
    let saved = Mutex<ExposurePolicy?>(nil)
    let failing = Mutex(false)
    func loadExposurePolicy() throws(HomeError) -> ExposurePolicy? { saved.withLock { $0 } }
    func saveExposurePolicy(_ policy: ExposurePolicy?, by: String) throws(HomeError) {
        if failing.withLock({ $0 }) { throw .internal("disk full") }
        saved.withLock { $0 = policy }
    }
}

@Suite struct ExposureSettingsTests {
    let admin = Principal(id: "user:ann", role: .admin, sessionID: "s")

    @Test func configuredPolicyAppliesUntilAnAdminEditsIt() throws {
        let store = MemoryExposureStore()
        var configured = ExposurePolicy()
        configured.rooms = ["garage"]
        let settings = try ExposureSettings(configured: configured, store: store)
        #expect(settings.current == configured)
        #expect(settings.source == .configuration)
        var edited = configured
        edited.includeSensitive = true
        try settings.update(edited, by: admin)
        #expect(settings.current == edited)
        #expect(settings.source == .admin)
        // A restart reads the admin's edit back.
        let again = try ExposureSettings(configured: configured, store: store)
        #expect(again.current == edited)
        try again.reset(by: admin)
        #expect(again.current == configured)
        #expect(try ExposureSettings(configured: configured, store: store).source == .configuration)
    }

    @Test func onlyAdminsEditAndAFailedSaveChangesNothing() throws {
        let store = MemoryExposureStore()
        let settings = try ExposureSettings(store: store)
        let member = Principal(id: "user:bob", role: .member, sessionID: "b")
        var p = ExposurePolicy()
        p.includeSensitive = true
        #expect(throws: HomeError.self) { try settings.update(p, by: member) }
        store.failing.withLock { $0 = true }
        #expect(throws: HomeError.self) { try settings.update(p, by: admin) }
        #expect(settings.current == .default)
    }

    @Test func watchersGetTheCurrentPolicyThenEachEdit() async throws {
        let settings = try ExposureSettings(store: nil)
        var it = settings.updates().makeAsyncIterator()
        #expect(await it.next() == .default)
        var p = ExposurePolicy()
        p.allowControl = false
        try settings.update(p, by: admin)
        #expect(await it.next() == p)
    }
}
