import Crypto
import Foundation
import HAP
@testable import HAPBridge
import HomeModel
import Testing

func device(_ id: String, name: String, type: DeviceTypeID, traits: [TraitID: [AttributeID: Value]], online: Bool = true) -> DeviceSnapshot {
    let conn = SourceConnectivity(connectivityState: online ? .online : .offline)
    var states: [TraitID: TraitState] = [:]
    for (k, v) in traits { states[k] = TraitState(id: k, attributes: v, sourceConnectivity: conn) }
    return DeviceSnapshot(
        id: DeviceID(rawValue: id), name: name, commissioning: .commissioned, types: [DeviceTypeState(id: type, isPrimary: true, traits: states)])
}

extension MappedAccessory {
    func characteristic(service: String, type: String) -> HAPCharacteristic? {
        accessory.services.first { $0.type == service }?.characteristics.first { $0.type == type }
    }
}

@Suite struct HAPMappingTests {
    @Test func iidAllocator_infoIs1_andKeysKeepTheirIID() {
        var a = IIDAllocator([:])
        #expect(a.iid("info") == 1)
        #expect(a.iid("info.identify") == 2)
        #expect(a.iid("light") == 3)
        var b = IIDAllocator(a.iids)
        #expect(b.iid("light") == 3)
        #expect(b.iid("fan") == 4)
        #expect(b.added == ["fan": 4])
    }

    @Test func dimmableColourLight_onBrightnessColourTemperature_andWrites() throws {
        let d = device("gpio:lamp", name: "Hall lamp", type: ColorTemperatureLightDeviceType.identifier, traits: [
            OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(true)],
            LevelControlTrait.identifier: [LevelControlTrait.Attribute.currentLevel: .int(127)],
            ColorControlTrait.identifier: [ColorControlTrait.Attribute.colorTemperatureMireds: .int(370)],
        ])
        var iids = IIDAllocator([:])
        let m = try #require(HAPMapper.accessory(for: d, aid: 2, iids: &iids))
        #expect(m.accessory.services.map(\.type) == ["3E", "43"])
        #expect(m.characteristic(service: "3E", type: "23")?.value == .string("Hall lamp"))
        #expect(m.characteristic(service: "43", type: "25")?.value == .bool(true))
        #expect(m.characteristic(service: "43", type: "8")?.value == .int(50))
        #expect(m.characteristic(service: "43", type: "CE")?.value == .int(370))
        let brightness = try #require(m.characteristic(service: "43", type: "8"))
        let actions = try #require(m.bindings[brightness.iid]?.write?(.int(100), d))
        guard case .invoke(let r) = actions.first else { Issue.record("expected a command"); return }
        #expect(r.command == LevelControlTrait.Command.moveToLevelWithOnOff && r.arguments["Level"] == .int(254))
        let off = try #require(m.bindings[brightness.iid]?.write?(.int(0), d))
        guard case .invoke(let r0) = off.first else { Issue.record("expected a command"); return }
        #expect(r0.command == OnOffTrait.Command.off)
    }

    struct MapCase: Sendable, CustomTestStringConvertible {
        let type: DeviceTypeID
        let trait: TraitID
        let attribute: AttributeID
        let value: Value
        let service: String
        let characteristic: String
        let expected: HAPValue
        init(_ type: DeviceTypeID, _ trait: TraitID, _ attribute: AttributeID, _ value: Value, _ service: String, _ characteristic: String, _ expected: HAPValue) {
            (self.type, self.trait, self.attribute, self.value, self.service, self.characteristic, self.expected) = (type, trait, attribute, value, service, characteristic, expected)
        }
        var testDescription: String { "service \(service) characteristic \(characteristic)" }
    }

    static let cases: [MapCase] = [
        MapCase(ContactSensorDeviceType.identifier, BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, Value.bool(true), "80", "6A", HAPValue.int(0)),
        MapCase(WaterLeakDetectorDeviceType.identifier, BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, Value.bool(true), "83", "70", HAPValue.int(1)),
        MapCase(OccupancySensorDeviceType.identifier, OccupancySensingTrait.identifier, OccupancySensingTrait.Attribute.occupancy, Value.int(1), "85", "22", HAPValue.bool(true)),
        MapCase(SmokeCOAlarmDeviceType.identifier, SmokeCOAlarmTrait.identifier, SmokeCOAlarmTrait.Attribute.smokeState, Value.int(2), "87", "76", HAPValue.int(1)),
        MapCase(TemperatureSensorDeviceType.identifier, TemperatureMeasurementTrait.identifier, 0, Value.int(2150), "8A", "11", HAPValue.double(21.5)),
        MapCase(HumiditySensorDeviceType.identifier, RelativeHumidityMeasurementTrait.identifier, 0, Value.int(4550), "82", "10", HAPValue.double(45.5)),
        MapCase(AirQualitySensorDeviceType.identifier, AirQualityTrait.identifier, AirQualityTrait.Attribute.airQuality, Value.int(6), "8D", "95", HAPValue.int(5)),
        MapCase(OnOffPlugInUnitDeviceType.identifier, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, Value.bool(false), "47", "25", HAPValue.bool(false)),
        MapCase(DoorLockDeviceType.identifier, DoorLockTrait.identifier, DoorLockTrait.Attribute.lockState, Value.int(1), "45", "1D", HAPValue.int(1)),
        MapCase(WindowCoveringDeviceType.identifier, WindowCoveringTrait.identifier, WindowCoveringTrait.Attribute.currentPositionLiftPercent100ths, Value.int(2500), "8C", "6D", HAPValue.int(75)),
        MapCase(FanDeviceType.identifier, FanControlTrait.identifier, FanControlTrait.Attribute.percentCurrent, Value.int(40), "B7", "29", HAPValue.double(40)),
        MapCase(ThermostatDeviceType.identifier, ThermostatTrait.identifier, ThermostatTrait.Attribute.localTemperature, Value.int(1990), "4A", "11", HAPValue.double(19.9))
    ]

    @Test(arguments: cases)
    func sensorsAndActuators_mapToTheirService(_ c: MapCase) throws {
        let d = device("x:1", name: "Thing", type: c.type, traits: [c.trait: [c.attribute: c.value]])
        var iids = IIDAllocator([:])
        let m = try #require(HAPMapper.accessory(for: d, aid: 5, iids: &iids))
        #expect(m.characteristic(service: c.service, type: c.characteristic)?.value == c.expected)
    }

    @Test func offlineDevice_characteristicsAnswerUnreachable() throws {
        let d = device("x:t", name: "Cellar", type: TemperatureSensorDeviceType.identifier,
            traits: [TemperatureMeasurementTrait.identifier: [0: .int(1200)]], online: false)
        var iids = IIDAllocator([:])
        let m = try #require(HAPMapper.accessory(for: d, aid: 3, iids: &iids))
        #expect(m.characteristic(service: "8A", type: "11")?.status == .unreachable)
        // The information service still answers (the name shows in Home).
        #expect(m.characteristic(service: "3E", type: "23")?.status == .success)
    }

    @Test func button_hasProgrammableSwitch_andEventsMapToPresses() throws {
        let d = device("gpio:bell", name: "Doorbell", type: GenericSwitchDeviceType.identifier,
            traits: [SwitchTrait.identifier: [SwitchTrait.Attribute.numberOfPositions: .int(2)]])
        var iids = IIDAllocator([:])
        let m = try #require(HAPMapper.accessory(for: d, aid: 4, iids: &iids))
        let event = try #require(m.characteristic(service: "89", type: "73"))
        #expect(m.buttons[1] == event.iid)
        #expect(event.perms == ["pr", "ev"])
        func ev(_ e: EventID, _ fields: [String: Value] = [:]) -> DeviceEvent {
            DeviceEvent(device: d.id, deviceType: GenericSwitchDeviceType.identifier, trait: SwitchTrait.identifier, event: e, fields: fields, timestampNanoseconds: 0)
        }
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.shortRelease))?.value == 0)
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.multiPressComplete, ["TotalNumberOfPressesCounted": .int(2)]))?.value == 1)
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.longPress))?.value == 2)
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.initialPress)) == nil)
        // With multi-press counted (MSM): releases are not presses; the count is, once.
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.shortRelease), multiPress: true) == nil)
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.multiPressComplete, ["TotalNumberOfPressesCounted": .int(1)]), multiPress: true)?.value == 0)
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.multiPressComplete, ["TotalNumberOfPressesCounted": .int(2)]), multiPress: true)?.value == 1)
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.multiPressComplete, ["TotalNumberOfPressesCounted": .int(3)]), multiPress: true) == nil)
        #expect(HAPMapper.buttonPress(ev(SwitchTrait.Event.longPress), multiPress: true)?.value == 2)
        #expect(!HAPMapper.countsMultiPress(d))
        let counting = device("gpio:bell2", name: "Doorbell", type: GenericSwitchDeviceType.identifier,
            traits: [SwitchTrait.identifier: [SwitchTrait.Attribute.numberOfPositions: .int(2), SwitchTrait.Attribute.multiPressMax: .int(2)]])
        #expect(HAPMapper.countsMultiPress(counting))
    }

    @Test func lockTarget_writesLockAndUnlock() throws {
        let d = device("x:lock", name: "Front lock", type: DoorLockDeviceType.identifier, traits: [DoorLockTrait.identifier: [DoorLockTrait.Attribute.lockState: .int(2)]])
        var iids = IIDAllocator([:])
        let m = try #require(HAPMapper.accessory(for: d, aid: 6, iids: &iids))
        let target = try #require(m.characteristic(service: "45", type: "1E"))
        #expect(target.value == .int(0))
        guard case .invoke(let r)? = m.bindings[target.iid]?.write?(.int(1), d)?.first else { Issue.record("no command"); return }
        #expect(r.command == DoorLockTrait.Command.lockDoor)
    }

    @Test func moreThan149Devices_theNewestAreRefused() throws {
        var mapped: [MappedAccessory] = []
        for n in 0..<160 {
            let d = device("x:\(n)", name: "Lamp \(n)", type: OnOffLightDeviceType.identifier, traits: [OnOffTrait.identifier: [0: .bool(false)]])
            var iids = IIDAllocator([:])
            // aids in reverse order of IDs: the limit follows aids, not names.
            mapped.append(try #require(HAPMapper.accessory(for: d, aid: 200 - n, iids: &iids)))
        }
        let (kept, refused) = HAPBridge.admit(mapped)
        #expect(kept.count == 149 && HAPBridge.maxAccessories == 150)
        #expect(refused.count == 11)
        #expect(kept.map(\.accessory.aid).max()! < 200 - 159 + 149)
        #expect(Set(refused) == Set((0..<11).map { DeviceID(rawValue: "x:\($0)") }))
    }

    @Test func unmappableDevice_isNil() {
        let d = device("x:e", name: "Meter", type: ElectricalSensorDeviceType.identifier, traits: [:])
        var iids = IIDAllocator([:])
        #expect(HAPMapper.accessory(for: d, aid: 7, iids: &iids) == nil)
    }
}

@Suite struct HAPStateStoreTests {
    func tempPath() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hap-store-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("hap.sqlite").path
    }

    @Test func fileIs0600_identityAndPairingsSurviveReopen() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try HAPStateStore(path: path)
        let identity = try store.identity(setupCode: "031-45-154")
        try store.savePairing(Pairing(identifier: "phone", publicKey: [UInt8](repeating: 9, count: 32), isAdmin: true))
        try store.saveFailedAttempts(3)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let again = try HAPStateStore(path: path)
        let back = try again.identity()
        #expect(back.pairingID == identity.pairingID && back.signingKeyBytes == identity.signingKeyBytes && back.setupCode == "031-45-154")
        #expect(try again.loadPairings() == [Pairing(identifier: "phone", publicKey: [UInt8](repeating: 9, count: 32), isAdmin: true)])
        #expect(try again.loadFailedAttempts() == 3)
        try again.removePairing(identifier: "phone")
        #expect(try again.loadPairings().isEmpty)
    }

    @Test func aidsAndIIDs_stableAcrossReopen_configNumberBumpsOnChange() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try HAPStateStore(path: path)
        _ = try store.identity()
        let aids = try store.aids(for: ["b:2", "a:1"])
        #expect(Set(aids.values) == [2, 3])
        try store.saveIIDs(aid: 2, ["info": 1, "light": 8])
        #expect(try store.configurationNumber(accessorySet: "one") == 1)
        #expect(try store.configurationNumber(accessorySet: "one") == 1)
        #expect(try store.configurationNumber(accessorySet: "two") == 2)
        let again = try HAPStateStore(path: path)
        // A new device gets a new aid; old ones keep theirs, whatever the order.
        let aids2 = try again.aids(for: ["c:3", "a:1", "b:2"])
        #expect(aids2["a:1"] == aids["a:1"] && aids2["b:2"] == aids["b:2"] && aids2["c:3"] == 4)
        #expect(try again.iids(aid: 2) == ["info": 1, "light": 8])
        #expect(try again.configurationNumber(accessorySet: "two") == 2)
    }

    @Test func backupAndRestore_keepKeysAndPairings_mode0600() throws {
        let path = tempPath()
        let dir = (path as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let database = dir + "/hearth.sqlite"
        let store = try HAPStateStore(path: HAPStateStore.defaultPath(database: database))
        let identity = try store.identity()
        try store.savePairing(Pairing(identifier: "phone", publicKey: [UInt8](repeating: 5, count: 32), isAdmin: true))
        let saved = try #require(try HAPBackup.save(database: database, output: dir + "/backup.json"))
        #expect(try FileManager.default.attributesOfItem(atPath: saved)[.posixPermissions] as? Int == 0o600)
        // Lose the state, restore it: same identity, same pairing.
        try store.removePairing(identifier: "phone")
        try FileManager.default.removeItem(atPath: HAPStateStore.defaultPath(database: database))
        #expect(try HAPBackup.restore(database: database, input: dir + "/backup.json") == saved)
        let back = try HAPStateStore(path: HAPStateStore.defaultPath(database: database))
        #expect(try back.identity().pairingID == identity.pairingID)
        #expect(try back.loadPairings().map(\.identifier) == ["phone"])
        #expect(try HAPBackup.restore(database: database, input: dir + "/none.json") == nil)
    }

    @Test func backupAndRestore_carryTheSecondBridgesState() throws {
        let path = tempPath()
        let dir = (path as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let database = dir + "/hearth.sqlite"
        let first = HAPStateStore.defaultPath(database: database)
        _ = try HAPStateStore(path: first).identity()
        let second = HAPStateStore.path(bridge: 1, first: first)
        #expect(second == dir + "/hap-2.sqlite")
        let store2 = try HAPStateStore(path: second)
        let identity2 = try store2.identity()
        try store2.savePairing(Pairing(identifier: "phone-2", publicKey: [UInt8](repeating: 6, count: 32), isAdmin: true))
        let saved = try #require(try HAPBackup.save(database: database, output: dir + "/backup.json"))
        let saved2 = HAPStateStore.path(bridge: 1, first: saved)
        #expect(saved2 == dir + "/backup.json.hap-2.sqlite")
        #expect(try FileManager.default.attributesOfItem(atPath: saved2)[.posixPermissions] as? Int == 0o600)
        try FileManager.default.removeItem(atPath: second)
        _ = try HAPBackup.restore(database: database, input: dir + "/backup.json")
        let back = try HAPStateStore(path: second)
        #expect(try back.identity().pairingID == identity2.pairingID)
        #expect(try back.loadPairings().map(\.identifier) == ["phone-2"])
    }

    @Test func setupURIAndHash_followTheSpecLayout() {
        let id = AccessoryIdentity(pairingID: "AA:BB:CC:DD:EE:01", signingKey: .init(), setupCode: "031-45-154", setupID: "HRTH")
        let uri = id.setupURI(category: 2)
        #expect(uri.hasPrefix("X-HM://") && uri.hasSuffix("HRTH") && uri.count == 7 + 9 + 4)
        // Decoding the base-36 payload gives back the code, the IP flag and the category.
        let payload = uri.dropFirst(7).prefix(9).reduce(UInt64(0)) { $0 * 36 + UInt64(String($1), radix: 36)! }
        #expect(payload & 0x7FF_FFFF == 3_145_154)
        #expect((payload >> 27) & 0xF == 2)
        #expect((payload >> 31) & 0xFF == 2)
        #expect(Data(base64Encoded: id.setupHash)?.count == 4)
        #expect(!AccessoryIdentity.isAllowedSetupCode("111-11-111") && !AccessoryIdentity.isAllowedSetupCode("123-45-678"))
        #expect(AccessoryIdentity.isAllowedSetupCode(AccessoryIdentity.generate().setupCode))
    }
}
