import DriverAPI
import HomeCore
import HomeModel
import HashTreeCollections
import Testing

/// The pure state machine, without any concurrency.
@Suite struct HomeStateTests {
    let catalog = Catalog.standard

    @Test func publishedDeviceArrivesDiscoveredAndOnline() throws {
        var state = HomeState()
        let outcome = try state.apply(.publish(plugin: "p", Fixtures.lamp()), catalog: catalog)
        let device = try #require(state.devices["p:lamp"])
        #expect(outcome.devices.map(\.1) == [.added])
        #expect(device.commissioning == .discovered)
        #expect(state.commissioned.isEmpty)
        #expect(device.sourceConnectivity.connectivityState == .online)
        #expect(device.primaryType?.id == OnOffLightDeviceType.identifier)
        #expect(state.version == 1)
    }

    @Test func commissionHintPlacesDeviceInANewRoom() throws {
        var state = HomeState()
        let outcome = try state.apply(.publish(plugin: "p", Fixtures.lamp(commission: Fixtures.inKitchen)), catalog: catalog)
        let device = try #require(state.commissioned["p:lamp"])
        #expect(outcome.structuresChanged && outcome.roomsChanged)
        #expect(device.commissioning == .commissioned)
        #expect(state.rooms[device.roomID!]?.name == "Kitchen")
        #expect(state.structures[device.structureID!]?.name == "Home")
    }

    @Test func attributeReportChangesOnlyAttributes() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.lamp()), catalog: catalog)
        let report = AttributeReport(localID: "lamp", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)
        let outcome = try state.apply(.report(plugin: "p", [report], at: 5), catalog: catalog)
        #expect(outcome.devices.map(\.1) == [.attributes])
        #expect(state.devices["p:lamp"]?.type(OnOffLightDeviceType.identifier)?.traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == true)
        #expect(state.lastSeen["p:lamp"] == 5)
    }

    @Test func identicalReportIsNotAChange() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.lamp(on: true)), catalog: catalog)
        let version = state.version
        let report = AttributeReport(localID: "lamp", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)
        let outcome = try state.apply(.report(plugin: "p", [report], at: 9), catalog: catalog)
        #expect(outcome.isEmpty)
        #expect(outcome.refreshed == 1)
        #expect(state.version == version)
        #expect(state.lastSeen["p:lamp"] == 9)
    }

    @Test func outOfRangeReportIsRefusedAndLastGoodValueKept() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.thermometer(celsius100: 2150)), catalog: catalog)
        let bad = AttributeReport(
            localID: "thermo", trait: TemperatureMeasurementTrait.identifier,
            attribute: TemperatureMeasurementTrait.Attribute.measuredValue, value: .int(99_999))
        let outcome = try state.apply(.report(plugin: "p", [bad], at: 1), catalog: catalog)
        #expect(outcome.isEmpty)
        #expect(outcome.rejected.count == 1)
        #expect(outcome.rejected[0].message.contains("MeasuredValue"))
        let t = state.devices["p:thermo"]?.type(TemperatureSensorDeviceType.identifier)?.traits[TemperatureMeasurementTrait.identifier]
        #expect(t?[TemperatureMeasurementTrait.Attribute.measuredValue] == .int(2150))
    }

    @Test func reportForUnknownDeviceOrTraitIsRefused() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.lamp()), catalog: catalog)
        let unknown = AttributeReport(localID: "ghost", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)
        let wrongTrait = AttributeReport(localID: "lamp", trait: LevelControlTrait.identifier, attribute: LevelControlTrait.Attribute.currentLevel, value: 5)
        let outcome = try state.apply(.report(plugin: "p", [unknown, wrongTrait], at: 1), catalog: catalog)
        #expect(outcome.rejected.count == 2)
        #expect(outcome.isEmpty)
    }

    /// A report for a device that is not there leaves no key behind in either tree (the edit
    /// reaches the slot without a lookup first), and says `unknown` even when its value is bad.
    @Test func reportForUnknownDeviceLeavesTheTreesAsTheyWere() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.lamp(commission: Fixtures.inKitchen)), catalog: catalog)
        _ = try state.apply(.publish(plugin: "p", Fixtures.thermometer(celsius100: 2150)), catalog: catalog)
        let (devices, commissioned, lastSeen) = (state.devices, state.commissioned, state.lastSeen)
        let ghost = AttributeReport(localID: "ghost", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)
        let badGhost = AttributeReport(
            localID: "ghost", trait: TemperatureMeasurementTrait.identifier,
            attribute: TemperatureMeasurementTrait.Attribute.measuredValue, value: .int(99_999))
        let outcome = try state.apply(.report(plugin: "p", [ghost, badGhost], at: 3), catalog: catalog)
        #expect(outcome.rejected.map(\.key) == ["unknown", "unknown"])
        #expect(outcome.isEmpty)
        #expect(state.devices == devices && state.commissioned == commissioned && state.lastSeen == lastSeen)
        #expect(state.devices["p:ghost"] == nil && state.devices[DeviceID(rawValue: "")] == nil)
        // The known devices still take reports, in both trees for the commissioned one.
        let on = AttributeReport(localID: "lamp", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)
        #expect(try state.apply(.report(plugin: "p", [on], at: 4), catalog: catalog).devices.map(\.1) == [.attributes])
        #expect(state.devices["p:lamp"] == state.commissioned["p:lamp"])
        #expect(state.commissioned["p:lamp"]?.type(OnOffLightDeviceType.identifier)?.traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == true)
        let warm = AttributeReport(
            localID: "thermo", trait: TemperatureMeasurementTrait.identifier, attribute: TemperatureMeasurementTrait.Attribute.measuredValue, value: .int(2200))
        #expect(try state.apply(.report(plugin: "p", [warm], at: 5), catalog: catalog).devices.map(\.1) == [.attributes])
        #expect(state.commissioned["p:thermo"] == nil)
    }

    @Test func connectivityGoesOfflineAndBackOnlineWithTheNextReport() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.lamp()), catalog: catalog)
        let off = try state.apply(.connectivity(plugin: "p", localID: nil, .offline), catalog: catalog)
        #expect(off.devices.map(\.1) == [.shape])
        #expect(state.devices["p:lamp"]?.sourceConnectivity.connectivityState == .offline)
        let report = AttributeReport(localID: "lamp", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: false)
        let back = try state.apply(.report(plugin: "p", [report], at: 2), catalog: catalog)
        #expect(back.devices.map(\.1) == [.shape])
        // Only the reporting trait is known to be back; the device is partially online.
        #expect(state.devices["p:lamp"]?.sourceConnectivity.connectivityState == .partiallyOnline)
    }

    /// DriverAPI v4's per-trait connectivity, through the core's own DriverContext: one trait
    /// offline makes its device type (and the device) partially online; `deviceType` narrows it
    /// to one type; the trait's next report brings it back.
    @Test func oneTraitOffline_makesItsTypePartiallyOnline_untilItReportsAgain() throws {
        let core = HomeCore()
        let context = core.context(for: "p")
        context.publish(Fixtures.thermometer())
        func state(_ type: DeviceTypeID, _ trait: TraitID? = nil) -> ConnectivityState? {
            let t = core.state.devices["p:thermo"]?.type(type)
            return trait.map { t?.traits[$0]?.sourceConnectivity.connectivityState } ?? t?.sourceConnectivity.connectivityState
        }
        let humidity = HumiditySensorDeviceType.identifier
        let temperature = TemperatureSensorDeviceType.identifier
        #expect(state(humidity) == .online)

        context.setConnectivity(.offline, device: "thermo", trait: RelativeHumidityMeasurementTrait.identifier)
        #expect(state(humidity, RelativeHumidityMeasurementTrait.identifier) == .offline)
        #expect(state(humidity, IdentifyTrait.identifier) == .online)
        #expect(state(humidity) == .partiallyOnline)
        #expect(state(temperature) == .online)
        #expect(core.state.devices["p:thermo"]?.sourceConnectivity.connectivityState == .partiallyOnline)

        // A trait two types share, set on one type only.
        context.setConnectivity(.offline, device: "thermo", trait: IdentifyTrait.identifier, deviceType: temperature)
        #expect(state(temperature, IdentifyTrait.identifier) == .offline)
        #expect(state(humidity, IdentifyTrait.identifier) == .online)

        context.report(
            "thermo", RelativeHumidityMeasurementTrait.identifier, RelativeHumidityMeasurementTrait.Attribute.measuredValue, .int(4400))
        #expect(state(humidity) == .online, "the trait's report brings it back")
    }

    @Test func removingACommissionedDeviceKeepsItOffline() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.lamp(commission: Fixtures.inKitchen)), catalog: catalog)
        _ = try state.apply(.publish(plugin: "p", Fixtures.button()), catalog: catalog)
        _ = try state.apply(.remove(plugin: "p", localID: "lamp"), catalog: catalog)
        _ = try state.apply(.remove(plugin: "p", localID: "button"), catalog: catalog)
        #expect(state.devices["p:lamp"]?.sourceConnectivity.connectivityState == .offline)
        #expect(state.devices["p:button"] == nil)
    }

    @Test func eventIsValidatedAgainstTheTrait() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.button()), catalog: catalog)
        let good = EventReport(localID: "button", trait: SwitchTrait.identifier, event: SwitchTrait.Event.initialPress, fields: ["NewPosition": 1])
        let outcome = try state.apply(.event(plugin: "p", good, at: 7), catalog: catalog)
        #expect(outcome.events.count == 1)
        #expect(outcome.events[0].timestampNanoseconds == 7)
        #expect(outcome.events[0].version == state.version)
        let bad = EventReport(localID: "button", trait: SwitchTrait.identifier, event: 0x77)
        let refused = try state.apply(.event(plugin: "p", bad, at: 8), catalog: catalog)
        #expect(refused.events.isEmpty)
        #expect(refused.rejected.first?.message.contains("has no event") == true)
    }

    @Test func deletingARoomUnassignsItsDevices() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.lamp(commission: Fixtures.inKitchen)), catalog: catalog)
        let room = try #require(state.devices["p:lamp"]?.roomID)
        _ = try state.apply(.layout(.deleteRoom(room)), catalog: catalog)
        let device = try #require(state.devices["p:lamp"])
        #expect(device.roomID == nil)
        #expect(device.commissioning == .commissioned)
        #expect(state.rooms.isEmpty)
    }

    @Test func roomNamesAreUniquePerStructureAfterNormalisation() throws {
        var state = HomeState()
        _ = try state.apply(.layout(.createStructure("s", name: "Home")), catalog: catalog)
        _ = try state.apply(.layout(.createRoom("r1", in: "s", name: "Bob's Room")), catalog: catalog)
        #expect(throws: HomeError.self) { try state.apply(.layout(.createRoom("r2", in: "s", name: "bobs  room")), catalog: catalog) }
        #expect(state.rooms.count == 1)
    }

    @Test func refusedLayoutEditChangesNothing() throws {
        var state = HomeState()
        _ = try state.apply(.publish(plugin: "p", Fixtures.lamp()), catalog: catalog)
        let before = state.version
        #expect(throws: HomeError.self) { try state.apply(.layout(.renameDevice("p:lamp", name: "Lamp 💡")), catalog: catalog) }
        #expect(state.version == before)
        #expect(state.devices["p:lamp"]?.name == "Lamp")
    }
}
