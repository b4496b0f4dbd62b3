import DriverAPI
import HashTreeCollections
import HomeCore
import HomeModel
import Testing

/// `Home.changedDevices()`: one subscription for the live state of every visible device.
@Suite struct ChangedDevicesTests {
    let core = HomeCore()
    var home: Home { core.home(for: .system) }
    var driver: any DriverContext { core.context(for: "p") }

    func celsius(_ d: HomeDevice) -> Value? {
        d.snapshot.type(TemperatureSensorDeviceType.identifier)?.traits[TemperatureMeasurementTrait.identifier]?[
            TemperatureMeasurementTrait.Attribute.measuredValue]
    }

    func reportCelsius(_ value: Int64, _ id: String = "thermo") {
        driver.report(id, TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, .int(value))
    }

    @Test func firstReadIsEveryVisibleDeviceThenAReportWakesItWithThatDevice() async throws {
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.publish(Fixtures.thermometer(commission: CommissionHint(name: "Thermometer")))
        var it = home.changedDevices().makeAsyncIterator()
        let first = try #require(await it.next())
        #expect(first.devices.map(\.id) == ["p:lamp", "p:thermo"])
        #expect(first.version == core.state.version)

        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        let second = try #require(await it.next())
        #expect(second.devices.map(\.id) == ["p:lamp"])
        #expect(second.devices[0].snapshot.onOffValue == true)
        #expect(second.version == core.state.version)
    }

    @Test func aSlowReaderGetsEachChangedDeviceOnceWithItsNewestState() async throws {
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.publish(Fixtures.thermometer(commission: CommissionHint(name: "Thermometer")))
        var it = home.changedDevices().makeAsyncIterator()
        _ = try #require(await it.next())
        let before = core.state.version
        for i in 1...1000 { reportCelsius(Int64(i)) }
        #expect(core.state.version == before + 1000)  // every report was a real change
        let read = try #require(await it.next())
        #expect(read.devices.map(\.id) == ["p:thermo"])
        #expect(celsius(read.devices[0]) == .int(1000))
        #expect(read.version == core.state.version)

        // Nothing else was queued behind it: the next read is the next change.
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        let next = try #require(await it.next())
        #expect(next.devices.map(\.id) == ["p:lamp"])
    }

    @Test func discoveredDevicesAreNeverSent() async throws {
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.publish(Fixtures.button())  // discovered, not commissioned
        var it = home.changedDevices().makeAsyncIterator()
        #expect(try #require(await it.next()).devices.map(\.id) == ["p:lamp"])
        driver.report("button", SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition, 1)
        #expect(core.state.devices["p:button"]?.commissioning == .discovered)
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        #expect(try #require(await it.next()).devices.map(\.id) == ["p:lamp"])
    }

    @Test func devicesAScopedAppCannotSeeAreNotSent() async throws {
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.publish(Fixtures.thermometer(commission: CommissionHint(name: "Thermometer")))
        driver.publish(Fixtures.lock(commission: CommissionHint(name: "Front Lock")))
        let app = core.home(for: Principal(
            id: "app:dash", role: .app,
            scope: GrantScope(deviceTypes: [TemperatureSensorDeviceType.identifier, DoorLockDeviceType.identifier], includeSensitive: false),
            sessionID: "t-dash"))
        var it = app.changedDevices().makeAsyncIterator()
        let first = try #require(await it.next())
        #expect(first.devices.map(\.id) == ["p:thermo"])
        #expect(first.devices[0].types.ids == [TemperatureSensorDeviceType.identifier])

        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)  // type not granted
        driver.setConnectivity(.offline, device: "lock")  // sensitive, not granted
        reportCelsius(2100)
        let second = try #require(await it.next())
        #expect(second.devices.map(\.id) == ["p:thermo"])
        #expect(second.devices[0].types.ids == [TemperatureSensorDeviceType.identifier])
        #expect(celsius(second.devices[0]) == .int(2100))
    }

    @Test func aMemberSeesEveryCommissionedDevice() async throws {
        driver.publish(Fixtures.lock(commission: CommissionHint(name: "Front Lock")))
        let member = core.home(for: Principal(id: "user:bob", role: .member, sessionID: "s-bob"))
        var it = member.changedDevices().makeAsyncIterator()
        #expect(try #require(await it.next()).devices.map(\.id) == ["p:lock"])
        driver.setConnectivity(.offline, device: "lock")
        let next = try #require(await it.next())
        #expect(next.devices.map(\.id) == ["p:lock"])
        #expect(next.devices[0].snapshot.sourceConnectivity.connectivityState == .offline)
    }

    @Test func aDeviceRemovedBeforeTheReadIsDroppedNotSentStale() async throws {
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.publish(Fixtures.thermometer(commission: CommissionHint(name: "Thermometer")))
        var it = home.changedDevices().makeAsyncIterator()
        _ = try #require(await it.next())
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        try home.edit(.removeDevice("p:lamp"))
        reportCelsius(2100)
        #expect(try #require(await it.next()).devices.map(\.id) == ["p:thermo"])
    }

    @Test func endsOnRevocationAndFreesItsObserver() async throws {
        let member = core.home(for: Principal(id: "user:bob", role: .member, sessionID: "s-bob"))
        do {
            var it = member.changedDevices().makeAsyncIterator()
            #expect(core.observerCount == 1)
            core.revoke(session: "s-bob")
            #expect(await it.next() == nil)
        }
        #expect(core.observerCount == 0)
        var again = member.changedDevices().makeAsyncIterator()
        #expect(await again.next() == nil)
    }
}
