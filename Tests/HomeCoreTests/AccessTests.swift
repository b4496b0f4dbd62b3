import DriverAPI
import HomeCore
import HomeModel
import Testing

@Suite struct AccessTests {
    let core = HomeCore()
    let member = Principal(id: "user:bob", role: .member, sessionID: "s-bob")

    init() {
        let driver = core.context(for: "p")
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.publish(Fixtures.thermometer(commission: CommissionHint(name: "Thermometer", room: "Kitchen")))
        driver.publish(Fixtures.lock(commission: CommissionHint(name: "Front Door", room: "Hall")))
        driver.publish(Fixtures.button())
    }

    @Test(arguments: [
        LayoutEdit.createStructure("s2", name: "Cabin"),
        .renameDevice("p:lamp", name: "Other"),
        .moveDevice("p:lamp", to: nil),
        .decommission("p:lamp"),
        .removeDevice("p:lamp"),
    ])
    func memberCannotChangeTheLayout(edit: LayoutEdit) async throws {
        let home = core.home(for: member)
        #expect(throws: HomeError.self) { try home.edit(edit) }
        do { try home.edit(edit) } catch { #expect(error.code == .permissionDenied) }
        #expect(try await home.devices().list().count == 3)
    }

    @Test func memberSeesNoDiscoveredDevicesButCanControl() async throws {
        let home = core.home(for: member)
        #expect(try await home.discoveredDevices().list().isEmpty)
        core.setCommandHandler(FakeLampHardware(context: core.context(for: "p")), for: "p")
        _ = try await home.invoke(CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
    }

    @Test func scopedGrantHidesOtherTypesAndSensitiveDevices() async throws {
        let app = Principal(
            id: "app:dash", role: .app,
            scope: GrantScope(deviceTypes: [TemperatureSensorDeviceType.identifier, DoorLockDeviceType.identifier], includeSensitive: false),
            sessionID: "t-dash")
        let home = core.home(for: app)
        let devices = try await home.devices().list()
        #expect(devices.map(\.id) == ["p:thermo"])
        // Only the granted type of the multisensor is visible.
        #expect(devices[0].types.ids == [TemperatureSensorDeviceType.identifier])
        #expect(throws: HomeError.self) { try home.currentDevice(id: "p:lamp") }
        await #expect(throws: HomeError.self) {
            try await home.invoke(CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        }

        let withSensitive = core.home(for: Principal(
            id: "app:lockapp", role: .app,
            scope: GrantScope(deviceTypes: [DoorLockDeviceType.identifier], includeSensitive: true), sessionID: "t-lock"))
        #expect(try await withSensitive.devices().list().map(\.id) == ["p:lock"])
    }

    /// The core works out a changed device's view once per distinct principal view and shares
    /// it (`DeviceViews`): each subscriber must still get exactly its own view, the admin the
    /// whole device, two apps with the same grant the same filtered one, an app whose grant was
    /// just changed its new one, and an app whose grant now hides the device the end.
    @Test func deviceSubscriptionsOfManyPrincipalsEachGetTheirOwnViewOfAChange() async throws {
        func app(_ session: String, _ types: Set<DeviceTypeID>) -> Home {
            core.home(for: Principal(id: "app:\(session)", role: .app, scope: GrantScope(deviceTypes: types, includeSensitive: false), sessionID: session))
        }
        let temperature = TemperatureSensorDeviceType.identifier, humidity = HumiditySensorDeviceType.identifier
        var admin = core.home(for: .system).device(id: "p:thermo").makeAsyncIterator()
        var a1 = app("t-a1", [temperature]).device(id: "p:thermo").makeAsyncIterator()
        var a2 = app("t-a2", [temperature]).device(id: "p:thermo").makeAsyncIterator()
        var both = app("t-both", [temperature, humidity]).device(id: "p:thermo").makeAsyncIterator()
        var changed = app("t-changed", [temperature]).device(id: "p:thermo").makeAsyncIterator()
        var hidden = app("t-hidden", [temperature]).device(id: "p:thermo").makeAsyncIterator()
        // Each starts with the device as it is now.
        #expect(await admin.next() != nil)
        #expect(await a1.next() != nil)
        #expect(await a2.next() != nil)
        #expect(await both.next() != nil)
        #expect(await changed.next() != nil)
        #expect(await hidden.next() != nil)
        core.updateScope(session: "t-changed", to: GrantScope(deviceTypes: [humidity], includeSensitive: false))
        core.updateScope(session: "t-hidden", to: GrantScope(deviceTypes: [OnOffLightDeviceType.identifier], includeSensitive: false))
        core.context(for: "p").report([
            AttributeReport(localID: "thermo", trait: TemperatureMeasurementTrait.identifier, attribute: TemperatureMeasurementTrait.Attribute.measuredValue, value: .int(2150))
        ])
        func types(_ d: HomeDevice?) -> [DeviceTypeID] { d?.types.ids ?? [] }
        func celsius(_ d: HomeDevice?) -> Int64? {
            d?.snapshot.type(temperature)?.traits[TemperatureMeasurementTrait.identifier]?[TemperatureMeasurementTrait.Attribute.measuredValue]?.intValue
        }
        let fromAdmin = await admin.next(), fromA1 = await a1.next(), fromA2 = await a2.next(), fromBoth = await both.next()
        #expect(types(fromAdmin) == [temperature, humidity] && celsius(fromAdmin) == 2150)
        #expect(types(fromA1) == [temperature] && celsius(fromA1) == 2150)
        #expect(types(fromA2) == [temperature] && celsius(fromA2) == 2150)
        #expect(types(fromBoth) == [temperature, humidity] && celsius(fromBoth) == 2150)
        #expect(types(await changed.next()) == [humidity])
        #expect(await hidden.next() == nil)
    }

    @Test func revokingASessionEndsItsSubscriptionsAndRefusesLaterCalls() async throws {
        let home = core.home(for: member)
        var it = home.devices().batched().makeAsyncIterator()
        _ = await it.next()
        core.revoke(session: "s-bob")
        #expect(await it.next() == nil)
        await #expect(throws: HomeError.permissionDenied("this session's access was revoked")) {
            try await home.devices().list()
        }
        #expect(await home.devices().batched().first() == nil)
        #expect(try await core.home(for: .system).devices().list().count == 3)
    }

    @Test func commissioningFollowsTheNamingRules() async throws {
        let home = core.home(for: .system)
        let structure = try #require(try await home.structures().list().first).id
        let kitchen = try #require(try await home.rooms().list().first { $0.name == "Kitchen" }).id
        do {
            try home.commission("p:button", name: "Button 🔘", structure: structure, room: kitchen)
            Issue.record("expected invalidArgument")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("emoji"))
            #expect(error.message.contains("'Button'"))
        }
        let verdict = try home.commission("p:button", name: "Kitchen Button", structure: structure, room: kitchen)
        #expect(verdict.warning != nil)
        #expect(verdict.suggestions == ["Button"])
        #expect(try home.currentDevice(id: "p:button").snapshot.commissioning == .commissioned)
    }
}
