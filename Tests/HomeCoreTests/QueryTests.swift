import DriverAPI
import HomeCore
import HomeModel
import Testing

@Suite struct QueryTests {
    let core = HomeCore()
    var home: Home { core.home(for: .system) }
    var driver: any DriverContext { core.context(for: "p") }

    @Test func listShowsCommissionedDevicesAndDiscoveredSeparately() async throws {
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        driver.publish(Fixtures.button())
        #expect(try await home.devices().list().map(\.id) == ["p:lamp"])
        #expect(try await home.discoveredDevices().list().map(\.id) == ["p:button"])
        #expect(try await home.rooms().list().map(\.name) == ["Kitchen"])
        #expect(try await home.structures().list().map(\.name) == ["Home"])
    }

    @Test func batchedGivesTheCurrentSetThenTheWholeSetOnEveryChange() async throws {
        driver.publish(Fixtures.lamp("a", commission: CommissionHint(name: "A")))
        var updates = home.devices().batched().makeAsyncIterator()
        let first = try #require(await updates.next())
        #expect(first.map(\.id) == ["p:a"])
        driver.publish(Fixtures.lamp("b", commission: CommissionHint(name: "B")))
        let second = try #require(await updates.next())
        #expect(Set(second.map(\.id)) == ["p:a", "p:b"])
        #expect(second.version > first.version)
    }

    @Test func batchedCoalescesForASlowConsumer() async throws {
        let updates = home.devices().batched()
        var it = updates.makeAsyncIterator()
        _ = await it.next()
        for i in 0..<50 { driver.publish(Fixtures.lamp("l\(i)", commission: CommissionHint(name: "Lamp \(i)"))) }
        let latest = try #require(await it.next())
        #expect(latest.count == 50)
        #expect(latest.version == core.state.version)
    }

    /// A `batched()` set is worked out when it is read (issue 22), yet it is still the set as the
    /// change that produced it left it: attribute reports after that change are not in it, and a
    /// reader that missed many changes gets one set with all of them.
    @Test func batchedSetIsTheStateOfItsVersionEvenWhenBuiltLater() async throws {
        let admin = core.home(for: Principal(id: "user:admin", role: .admin))
        driver.publish(Fixtures.thermometer("t0", celsius100: 1000))
        var it = admin.discoveredDevices().batched().makeAsyncIterator()
        let first = try #require(await it.next())
        #expect(first.map(\.id) == ["p:t0"])
        for i in 1..<40 { driver.publish(Fixtures.thermometer("t\(i)", celsius100: 1000)) }
        let version = core.state.version
        // Attribute reports wake no batched() reader and must not leak into the pending set.
        driver.report("t0", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, .int(2500))
        #expect(core.state.version > version)
        let latest = try #require(await it.next())
        #expect(latest.count == 40)
        #expect(latest.version == version)
        let t0 = try #require(latest[id: "p:t0"])
        #expect(t0.snapshot.primaryType?.traits[TemperatureMeasurementTrait.identifier]?[TemperatureMeasurementTrait.Attribute.measuredValue] == .int(1000))
        // A member sees no discovered devices, however the set is built.
        var member = core.home(for: Principal(id: "user:bob", role: .member)).discoveredDevices().batched().makeAsyncIterator()
        #expect(try #require(await member.next()).isEmpty)
    }

    @Test func streamGivesASnapshotThenOnlyWhatChanged() async throws {
        driver.publish(Fixtures.lamp("a", commission: CommissionHint(name: "A")))
        var it = home.devices().stream().makeAsyncIterator()
        guard case .snapshot(let set)? = await it.next() else { Issue.record("expected a snapshot"); return }
        #expect(set.map(\.id) == ["p:a"])

        driver.publish(Fixtures.lamp("b", commission: CommissionHint(name: "B")))
        guard case .added(let added)? = await it.next() else { Issue.record("expected added"); return }
        #expect(added.id == "p:b")

        // An attribute change does not wake devices() observers; the rename after it does.
        driver.report("a", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        try home.edit(.renameDevice("p:a", name: "Alpha"))
        guard case .updated(let updated)? = await it.next() else { Issue.record("expected updated"); return }
        #expect(updated.name == "Alpha")

        try home.edit(.removeDevice("p:b"))
        guard case .removed(let id)? = await it.next() else { Issue.record("expected removed"); return }
        #expect(id == "p:b")
    }

    @Test func streamThatOverflowsGetsAFreshSnapshotInsteadOfLosingDiffs() async throws {
        var it = home.devices().stream().makeAsyncIterator()
        guard case .snapshot(let empty)? = await it.next() else { Issue.record("expected a snapshot"); return }
        #expect(empty.isEmpty)
        let n = HomeCore.streamBufferLimit + 10
        for i in 0..<n { driver.publish(Fixtures.lamp("l\(i)", commission: CommissionHint(name: "Lamp \(i)"))) }
        guard case .snapshot(let fresh)? = await it.next() else { Issue.record("expected a resync snapshot"); return }
        #expect(fresh.count == n)
        // Diffs continue after the snapshot, none repeated.
        driver.publish(Fixtures.lamp("last", commission: CommissionHint(name: "Last")))
        guard case .added(let d)? = await it.next() else { Issue.record("expected added after resync"); return }
        #expect(d.id == "p:last")
    }

    @Test func subscribingWhileDevicesArriveLosesNothing() async throws {
        let total = 200
        let producer = Task.detached { [driver] in
            for i in 0..<total { driver.publish(Fixtures.lamp("l\(i)", commission: CommissionHint(name: "Lamp \(i)"))) }
        }
        var seen = Set<DeviceID>()
        for await change in home.devices().stream() {
            switch change {
            case .snapshot(let set): seen = Set(set.map(\.id))
            case .added(let d): seen.insert(d.id)
            case .updated: break
            case .removed(let id): seen.remove(id)
            }
            if seen.count == total { break }
        }
        await producer.value
        #expect(seen.count == total)
    }

    @Test func cancellingASubscriptionFreesIt() async throws {
        #expect(core.observerCount == 0)
        do {
            let updates = home.devices().batched()
            var it = updates.makeAsyncIterator()
            _ = await it.next()
            #expect(core.observerCount == 1)
        }
        #expect(core.observerCount == 0)

        let task = Task { [home] in for await _ in home.devices().stream() {} }
        while core.observerCount == 0 { await Task.yield() }
        task.cancel()
        await task.value
        #expect(core.observerCount == 0)
    }

    @Test func deviceSubscriptionSeesAttributeChangesButNotIdenticalReports() async throws {
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        var it = home.device(id: "p:lamp").makeAsyncIterator()
        let first = try #require(await it.next())
        #expect(await first.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff == false)
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, false)  // identical: no wake-up
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        let second = try #require(await it.next())
        #expect(await second.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff == true)
        #expect(core.state.version == 2)  // the commissioned publish, then one real change
    }

    @Test func deviceSubscriptionEndsWhenTheDeviceIsRemoved() async throws {
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        let updates = home.device(id: "p:lamp")
        var it = updates.makeAsyncIterator()
        _ = await it.next()
        try home.edit(.removeDevice("p:lamp"))
        #expect(await it.next() == nil)
    }

    @Test func typesSubscribeEmitsOnTraitChangesAndFinishesWhenTypeIsMissing() async throws {
        driver.publish(Fixtures.thermometer(commission: CommissionHint(name: "Thermometer")))
        let device = try home.currentDevice(id: "p:thermo")
        #expect(device.types.contains(TemperatureSensorDeviceType.self))
        #expect(device.types.contains(HumiditySensorDeviceType.self))
        #expect(await device.types.get(TemperatureSensorDeviceType.self)?.metadata.isPrimaryType == true)
        #expect(await device.types.get(HumiditySensorDeviceType.self)?.metadata.isPrimaryType == false)

        var lights = device.types.subscribe(OnOffLightDeviceType.self).makeAsyncIterator()
        #expect(await lights.next() == nil)

        var temps = device.types.subscribe(TemperatureSensorDeviceType.self).makeAsyncIterator()
        #expect(await temps.next()?.matterTraits.temperatureMeasurementTrait?.attributes.measuredValue == 2000)
        driver.report("thermo", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, 2150)
        #expect(await temps.next()?.matterTraits.temperatureMeasurementTrait?.attributes.measuredValue == 2150)
    }

    @Test func eventsAreNeverCoalesced() async throws {
        driver.publish(Fixtures.button(commission: CommissionHint(name: "Button")))
        var it = home.events(device: "p:button").makeAsyncIterator()
        for i in 0..<100 {
            driver.emit(
                EventReport(localID: "button", trait: SwitchTrait.identifier, event: SwitchTrait.Event.multiPressComplete,
                    fields: ["PreviousPosition": 1, "TotalNumberOfPressesCounted": .int(Int64(i % 5 + 1))]))
        }
        var received: [DeviceEvent] = []
        while received.count < 100, let e = await it.next() { received.append(e) }
        #expect(received.count == 100)
        #expect(received.map(\.version) == received.map(\.version).sorted())
        #expect(received[7].fields["TotalNumberOfPressesCounted"] == 3)
    }

    @Test func everyChangeHasAMonotonicVersion() async throws {
        var versions: [UInt64] = []
        for i in 0..<5 {
            driver.publish(Fixtures.lamp("l\(i)"))
            versions.append(core.state.version)
        }
        #expect(versions == [1, 2, 3, 4, 5])
    }
}
