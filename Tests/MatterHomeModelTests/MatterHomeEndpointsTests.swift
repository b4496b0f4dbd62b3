import DriverAPI
import Foundation
import HomeCore
import HomeModel
import HomeStorage
import MatterHomeModel
import MatterInteraction
import MatterMessaging
import MatterTLV
import Testing

/// The home's exposed devices as bridged endpoints (issue 21, part B): a real HomeCore, a real
/// SQLite file, a MatterNode driven through the InteractionEngine with encoded IM messages.
@Suite(.serialized) struct MatterHomeEndpointsTests {
    let onOff: UInt32 = 0x0006
    let booleanState: UInt32 = 0x0045
    let temperature: UInt32 = 0x0402
    let bdbi = BridgedDeviceBasicInformation.id

    @Test func partsList_stableAcrossARestart_andFollowsDevicesAddedAndRemoved() async throws {
        let w = try BridgeWorld()
        for d in [Devices.relay(), Devices.contact(), Devices.thermometer(), Devices.combo()] { w.driver.publish(d) }
        w.endpoints.start()
        // Under a loaded parallel suite the first placements took 4–8.5 s (measured): 60 s bound.
        #expect(await w.wait(60) { w.endpoints.placements.count == 4 })
        let first = w.endpoints.placements
        let all = Set(first.values.flatMap { [$0.node] + $0.types.values })
        #expect(Set(try w.partsList()) == all)
        #expect(all.count == 6)  // 3 single-type devices + the combo's node and its two type endpoints
        #expect(all.allSatisfy { $0 >= 2 })

        // The composed device: a Bridged Node with one child endpoint per device type.
        let combo = try #require(first[w.id("combo")])
        #expect(Set(combo.types.keys) == [ContactSensorDeviceType.identifier, TemperatureSensorDeviceType.identifier])
        #expect(!combo.types.values.contains(combo.node))
        let nodeTypes = try #require(try w.value(combo.node, DescriptorCluster.id, DescriptorCluster.deviceTypeList)?.members)
        #expect(nodeTypes.compactMap { try? $0[context: 0]?.uint() } == [0x0013])
        #expect(Set(try w.value(combo.node, DescriptorCluster.id, DescriptorCluster.partsList)?.members?.compactMap { try? UInt16($0.uint()) } ?? [])
                == Set(combo.types.values))
        let sensorEndpoint = try #require(combo.types[ContactSensorDeviceType.identifier])
        #expect(try w.value(sensorEndpoint, booleanState, 0) == TLVElement(.bool(false)))
        #expect(try w.value(combo.types[TemperatureSensorDeviceType.identifier]!, temperature, 0) == TLVElement(.signed(1800)))
        // A single-type device: its type and Bridged Node on one endpoint.
        let relay = try #require(first[w.id("relay")])
        #expect(relay.types == [OnOffPlugInUnitDeviceType.identifier: relay.node])
        let relayTypes = try w.value(relay.node, DescriptorCluster.id, DescriptorCluster.deviceTypeList)?.members?.compactMap { try? $0[context: 0]?.uint() }
        #expect(relayTypes == [0x010A, 0x0013])

        // A restart with the same database file: the same numbers, the same PartsList.
        try await w.restart()
        #expect(await w.wait { w.endpoints.placements.count == 4 })
        #expect(w.endpoints.placements == first)
        #expect(Set(try w.partsList()) == all)

        // A device commissioned later: new endpoints, no re-pairing (same node, same engine).
        w.driver.publish(Devices.relay("relay2"))
        #expect(await w.wait { w.endpoints.placement(of: w.id("relay2")) != nil })
        let added = try #require(w.endpoints.placement(of: w.id("relay2"))).node
        #expect(added > all.max()!)
        #expect(Set(try w.partsList()) == all.union([added]))

        // Removed: its endpoint leaves the PartsList, and its number is not handed out again.
        try w.admin.edit(.removeDevice(w.id("door")))
        #expect(await w.wait { w.endpoints.placement(of: w.id("door")) == nil })
        let removed = try #require(first[w.id("door")]).node
        #expect(!(try w.partsList()).contains(removed))
        #expect(try w.read([AttributePath(endpoint: removed, cluster: booleanState, attribute: 0)]).statuses.values.first == .unsupportedEndpoint)
        w.driver.publish(Devices.contact("door2"))
        #expect(await w.wait { w.endpoints.placement(of: w.id("door2")) != nil })
        let replacement = try #require(w.endpoints.placement(of: w.id("door2"))).node
        #expect(replacement != removed && replacement > added)
        await w.endpoints.stop()
        #expect(try w.partsList().isEmpty)
    }

    @Test func reads_contactSensorTemperatureAndBridgedInformation_reachableFollowsConnectivity() async throws {
        let w = try BridgeWorld()
        for d in [Devices.relay(), Devices.contact(), Devices.thermometer()] { w.driver.publish(d) }
        w.endpoints.start()
        #expect(await w.wait { w.endpoints.placements.count == 3 })
        let door = try #require(w.endpoints.placement(of: w.id("door"))).node
        let thermo = try #require(w.endpoints.placement(of: w.id("thermo"))).node
        let relay = try #require(w.endpoints.placement(of: w.id("relay"))).node

        let read = try w.read([
            AttributePath(endpoint: door, cluster: booleanState, attribute: 0),
            AttributePath(endpoint: thermo, cluster: temperature),
            AttributePath(endpoint: door, cluster: bdbi),
            AttributePath(endpoint: relay, cluster: bdbi),
            AttributePath(endpoint: door, cluster: 0x0040, attribute: 0),
        ])
        func v(_ e: UInt16, _ c: UInt32, _ a: UInt32) -> TLVElement? { read.values[ConcreteAttributePath(endpoint: e, cluster: c, attribute: a)] }
        #expect(v(door, booleanState, 0) == TLVElement(.bool(true)))
        #expect(v(thermo, temperature, 0) == TLVElement(.signed(2150)))
        // Min/MaxMeasuredValue are mandatory and nullable: unknown reads as null.
        #expect(v(thermo, temperature, 1) == TLVElement(.null))
        #expect(v(door, bdbi, 0x05) == TLVElement(.utf8("Front door")))
        #expect(v(door, bdbi, 0x11) == TLVElement(.bool(true)))
        #expect(v(door, bdbi, 0x12) == TLVElement(.utf8("gpio:door")))
        // The identity (issue 17) and the manufacturer/model fallback.
        #expect(v(relay, bdbi, 0x01) == TLVElement(.utf8("Acme")))
        #expect(v(relay, bdbi, 0x02) == TLVElement(.unsigned(0xFFF1)))
        #expect(v(relay, bdbi, 0x0F) == TLVElement(.utf8("SN-relay")))
        #expect(try w.value(thermo, bdbi, 0x03) == TLVElement(.utf8("1-Wire probe")))
        // The room as the endpoint's Fixed Label "room".
        let label = try #require(v(door, 0x0040, 0)?.members?.first)
        #expect(label[context: 0] == TLVElement(.context(0), .utf8("room")))
        #expect(label[context: 1] == TLVElement(.context(1), .utf8("Hall")))
        #expect(read.statuses.isEmpty)

        // A new value and an offline device: the data versions move, the values follow.
        let versionBefore = try #require(w.node.clusterInfo(ConcreteClusterPath(endpoint: thermo, cluster: temperature))?.dataVersion)
        let bdbiBefore = try #require(w.node.clusterInfo(ConcreteClusterPath(endpoint: door, cluster: bdbi))?.dataVersion)
        w.driver.report("thermo", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, .int(2230))
        w.driver.setConnectivity(.offline, device: "door")
        #expect(await w.wait { w.node.clusterInfo(ConcreteClusterPath(endpoint: door, cluster: bdbi))?.dataVersion != bdbiBefore })
        #expect(await w.wait { w.node.clusterInfo(ConcreteClusterPath(endpoint: thermo, cluster: temperature))?.dataVersion != versionBefore })
        #expect(try w.value(thermo, temperature, 0) == TLVElement(.signed(2230)))
        #expect(try w.value(door, bdbi, 0x11) == TLVElement(.bool(false)))
        // The last known state is still served while unreachable.
        #expect(try w.value(door, booleanState, 0) == TLVElement(.bool(true)))
        w.driver.setConnectivity(.online, device: "door")
        #expect(await w.wait { (try? w.value(door, bdbi, 0x11)) == TLVElement(.bool(true)) })
        await w.endpoints.stop()
    }

    @Test func switchEvents_andBooleanStateChanges_becomeEventsOfTheirEndpoints() async throws {
        let w = try BridgeWorld()
        for d in [Devices.button(), Devices.contact()] { w.driver.publish(d) }
        w.endpoints.start()
        #expect(await w.wait { w.endpoints.placements.count == 2 })
        let bell = try #require(w.endpoints.placement(of: w.id("bell"))).node
        let door = try #require(w.endpoints.placement(of: w.id("door"))).node
        // EventList from the feature map: MS, MSR, MSL, MSM (not SwitchLatched, LS).
        #expect(w.node.clusterInfo(ConcreteClusterPath(endpoint: bell, cluster: 0x3B))?.events == [1, 2, 3, 4, 5, 6])
        #expect(w.node.clusterInfo(ConcreteClusterPath(endpoint: door, cluster: booleanState))?.events == [0])

        let before = w.changes.value
        w.driver.emit(EventReport(localID: "bell", trait: SwitchTrait.identifier, event: SwitchTrait.Event.initialPress,
                                  fields: ["NewPosition": .int(1)], timestampNanoseconds: 1_790_000_000_123_456_789))
        w.driver.emit(EventReport(localID: "bell", trait: SwitchTrait.identifier, event: SwitchTrait.Event.multiPressComplete,
                                  fields: ["PreviousPosition": .int(1), "TotalNumberOfPressesCounted": .int(2)], timestampNanoseconds: 1_790_000_000_500_000_000))
        #expect(await w.wait { w.node.events(from: 0).count == 2 })
        let events = w.node.events(from: 0)
        #expect(events.map(\.event) == [1, 6] && events.allSatisfy { $0.endpoint == bell && $0.cluster == 0x3B && $0.priority == .info })
        #expect(events.first?.epochTimestampMs == 1_790_000_000_123)
        #expect(events.first?.data == .structure([TLVElement(.context(0), .unsigned(1))]))
        #expect(events.last?.data == .structure([TLVElement(.context(0), .unsigned(1)), TLVElement(.context(1), .unsigned(2))]))
        #expect(w.changes.value > before)

        // The contact opens: StateChange with the new StateValue.
        w.driver.report("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(false))
        #expect(await w.wait { w.node.events(from: 0).count == 3 })
        let change = try #require(w.node.events(from: 0).last)
        #expect(change.endpoint == door && change.cluster == booleanState && change.event == 0)
        #expect(change.data == .structure([TLVElement(.context(0), .bool(false))]))

        // Through the engine: a read of the button's events.
        let effects = try w.send(ReadRequestMessage(eventRequests: [EventPath(endpoint: bell)]), on: w.exchange())
        let report = try w.single(effects, ReportDataMessage.self)
        #expect(try report.eventReports?.map { try EventReport(tlv: $0).record } == events)
        await w.endpoints.stop()
    }

    @Test func toggle_goesThroughTheCoreToTheDevice_andTheNewStateIsReportedToASubscriber() async throws {
        let w = try BridgeWorld()
        w.driver.publish(Devices.relay())
        w.endpoints.start()
        #expect(await w.wait { w.endpoints.placement(of: w.id("relay")) != nil })
        let relay = try #require(w.endpoints.placement(of: w.id("relay"))).node

        // Subscribe to On/Off (min interval 0) and complete the priming.
        let ex = w.exchange()
        let priming = try w.single(
            try w.send(SubscribeRequestMessage(minIntervalFloor: 0, maxIntervalCeiling: 60,
                                               attributeRequests: [AttributePath(endpoint: relay, cluster: onOff, attribute: 0)]), on: ex),
            ReportDataMessage.self)
        let subscription = try #require(priming.subscriptionID)
        _ = try w.single(try w.send(StatusResponseMessage(.success), on: ex), SubscribeResponseMessage.self)

        // Toggle: accepted, sent through the core as exposure:matter, the hardware switches.
        let changesBefore = w.changes.value
        #expect(try w.invoke(relay, onOff, UInt32(OnOffTrait.Command.toggle.rawValue)) == .success)
        #expect(await w.wait { w.hardware.commands.count == 1 })
        let command = try #require(w.hardware.commands.first)
        #expect(command.localID == "relay" && command.command == OnOffTrait.Command.toggle && command.origin == "exposure:matter")
        // The device's report comes back: the cluster is marked and the server woken.
        #expect(await w.wait { w.changes.value > changesBefore && (try? w.admin.currentDevice(id: w.id("relay")))?.snapshot.primaryType?.traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == .bool(true) })
        #expect(await w.wait { (try? w.value(relay, onOff, 0)) == TLVElement(.bool(true)) })
        // The Invoke itself moved the cluster's version: the engine sent a report on a new
        // exchange at once; acknowledge it so the next one can go.
        let reportExchange = ExchangeKey(session: w.session, exchangeID: 900, weInitiated: true)
        w.engine.reportExchangeOpened(reportExchange, subscriptionID: subscription)
        _ = try w.send(StatusResponseMessage(.success), on: reportExchange)
        let effects = w.engine.dataChanged(now: w.now)
        let reports = effects.compactMap { e -> ReportDataMessage? in
            if case .sendOnNewExchange(_, subscription, .reportData, let p) = e { try? ReportDataMessage(decoding: p) } else { nil }
        }
        let report = try #require(reports.first)
        #expect(report.attributeReports?.contains {
            if case .data(let d) = $0 { d.path.endpoint == relay && d.path.cluster == onOff && d.path.attribute == 0 && d.data == TLVElement(.bool(true)) } else { false }
        } == true)

        // A command the cluster does not accept, and an unreachable device: refused at once.
        #expect(try w.invoke(relay, onOff, 0x40) == .unsupportedCommand)
        w.driver.setConnectivity(.offline, device: "relay")
        #expect(await w.wait { (try? w.value(relay, bdbi, 0x11)) == TLVElement(.bool(false)) })
        #expect(try w.invoke(relay, onOff, UInt32(OnOffTrait.Command.on.rawValue)) == .failure)
        try await Task.sleep(for: .milliseconds(200))
        #expect(w.hardware.commands.count == 1)
        await w.endpoints.stop()
    }

    @Test func readOnlyExposure_refusesCommandsWithUnsupportedAccess() async throws {
        let w = try BridgeWorld(policy: ExposurePolicy(allowControl: false))
        w.driver.publish(Devices.relay())
        w.endpoints.start()
        #expect(await w.wait { w.endpoints.placement(of: w.id("relay")) != nil })
        let relay = try #require(w.endpoints.placement(of: w.id("relay"))).node
        #expect(try w.value(relay, onOff, 0) == TLVElement(.bool(false)))
        #expect(try w.invoke(relay, onOff, UInt32(OnOffTrait.Command.toggle.rawValue)) == .unsupportedAccess)
        try await Task.sleep(for: .milliseconds(200))
        #expect(w.hardware.commands.isEmpty)
        // An admin allows control: the same command now reaches the device.
        try w.settings.update(ExposurePolicy(allowControl: true), by: Principal(id: "admin", role: .admin))
        #expect(await w.wait { (try? w.invoke(relay, onOff, UInt32(OnOffTrait.Command.toggle.rawValue))) == .success })
        #expect(await w.wait { w.hardware.commands.count == 1 })
        await w.endpoints.stop()
    }

    @Test func sensitiveDevice_hiddenUntilAnAdminOptsItIn() async throws {
        let w = try BridgeWorld()
        w.driver.publish(Devices.lock())
        w.driver.publish(Devices.contact())
        w.endpoints.start()
        #expect(await w.wait { w.endpoints.placement(of: w.id("door")) != nil })
        try await Task.sleep(for: .milliseconds(200))
        #expect(w.endpoints.placement(of: w.id("lock")) == nil)
        #expect(try w.partsList().count == 1)
        try w.settings.update(ExposurePolicy(devices: [w.id("lock")]), by: Principal(id: "admin", role: .admin))
        #expect(await w.wait { w.endpoints.placement(of: w.id("lock")) != nil })
        let lock = try #require(w.endpoints.placement(of: w.id("lock"))).node
        #expect(try w.value(lock, 0x0101, 0) == TLVElement(.unsigned(1)))
        // Opted in by ID only: the other devices are no longer selected (the policy's rule 3).
        #expect(await w.wait { w.endpoints.placement(of: w.id("door")) == nil })
        #expect(try w.partsList() == [lock])
        await w.endpoints.stop()
    }

    /// The rooms as the Aggregator's Actions cluster (0x0025): one EndpointList per room with
    /// exposed devices (Type Room, the room's name, its devices' endpoints), ActionList empty;
    /// a device moving room or appearing moves the cluster's data version and a subscriber to
    /// EndpointLists gets a report.
    @Test func rooms_asActionsEndpointLists_followMovesAndNewDevices() async throws {
        let actions: UInt32 = 0x0025
        let w = try BridgeWorld()
        for d in [Devices.relay(), Devices.contact(), Devices.combo()] { w.driver.publish(d) }
        w.endpoints.start()
        #expect(await w.wait(60) { w.endpoints.placements.count == 3 })
        let relay = try #require(w.endpoints.placement(of: w.id("relay")))
        let door = try #require(w.endpoints.placement(of: w.id("door")))
        let combo = try #require(w.endpoints.placement(of: w.id("combo")))
        func lists() throws -> [(id: UInt64, name: String, type: UInt64, endpoints: Set<UInt16>)] {
            try (w.value(1, actions, 1)?.members ?? []).map { l in
                guard let id = try? l[context: 0]?.uint(), let name = try? l[context: 1]?.string(), let type = try? l[context: 2]?.uint(),
                      let endpoints = l[context: 3]?.members
                else { throw InteractionError("a malformed EndpointListStruct: \(l)") }
                return (id, name, type, Set(endpoints.compactMap { try? UInt16($0.uint()) }))
            }
        }
        func room(_ name: String) throws -> (id: UInt64, name: String, type: UInt64, endpoints: Set<UInt16>)? { try lists().first { $0.name == name } }
        let read = try w.read([AttributePath(endpoint: 1, cluster: actions)])
        func v(_ a: UInt32) -> TLVElement? { read.values[ConcreteAttributePath(endpoint: 1, cluster: actions, attribute: a)] }
        #expect(v(0) == TLVElement(.array([])))  // ActionList: no actions
        #expect(v(GlobalAttribute.clusterRevision) == TLVElement(.unsigned(1)))
        #expect(v(GlobalAttribute.featureMap) == TLVElement(.unsigned(0)))
        #expect(v(GlobalAttribute.acceptedCommandList) == TLVElement(.array([])))
        #expect(read.statuses.isEmpty)
        #expect(try lists().count == 2)
        let garage = try #require(try room("Garage"))
        let hall = try #require(try room("Hall"))
        #expect(garage.type == 1 && hall.type == 1 && garage.id != hall.id)
        #expect(garage.endpoints == [relay.node])
        #expect(hall.endpoints == Set([door.node, combo.node] + combo.types.values))
        // The Aggregator lists the cluster; the Fixed Label "room" is still on each node.
        let aggregatorClusters = try w.value(1, DescriptorCluster.id, 1)?.members?.compactMap { try? $0.uint() } ?? []
        #expect(aggregatorClusters.contains(UInt64(actions)))
        #expect(try w.value(relay.node, 0x0040, 0)?.members?.first?[context: 1] == TLVElement(.context(1), .utf8("Garage")))

        // Subscribe to EndpointLists (min interval 0) and complete the priming.
        let ex = w.exchange()
        let priming = try w.single(
            try w.send(SubscribeRequestMessage(minIntervalFloor: 0, maxIntervalCeiling: 60,
                                               attributeRequests: [AttributePath(endpoint: 1, cluster: actions, attribute: 1)]), on: ex),
            ReportDataMessage.self)
        let subscription = try #require(priming.subscriptionID)
        _ = try w.single(try w.send(StatusResponseMessage(.success), on: ex), SubscribeResponseMessage.self)
        let version = { w.node.clusterInfo(ConcreteClusterPath(endpoint: 1, cluster: actions))?.dataVersion }
        let before = try #require(version())

        // The door moves to the garage: the Hall list loses it, Garage gains it, the version moves.
        let garageID = try #require(w.core.state.rooms.first { $0.value.name == "Garage" }?.key)
        try w.admin.edit(.moveDevice(w.id("door"), to: garageID))
        #expect(await w.wait { version() != before })
        #expect(try room("Garage")?.endpoints == [relay.node, door.node])
        #expect(try room("Hall")?.endpoints == Set([combo.node] + combo.types.values))
        #expect(try room("Garage")?.id == garage.id && (try room("Hall"))?.id == hall.id)  // a room keeps its list ID
        let effects = w.engine.dataChanged(now: w.now)
        let reports = effects.compactMap { e -> ReportDataMessage? in
            if case .sendOnNewExchange(_, subscription, .reportData, let p) = e { try? ReportDataMessage(decoding: p) } else { nil }
        }
        let report = try #require(reports.first)
        #expect(report.attributeReports?.contains {
            if case .data(let d) = $0 { d.path.endpoint == 1 && d.path.cluster == actions && d.path.attribute == 1 } else { false }
        } == true)
        let reportExchange = ExchangeKey(session: w.session, exchangeID: 901, weInitiated: true)
        w.engine.reportExchangeOpened(reportExchange, subscriptionID: subscription)
        _ = try w.send(StatusResponseMessage(.success), on: reportExchange)

        // A new device in a new room: a third list; a device with no room is in none.
        let moved = try #require(version())
        w.driver.publish(Devices.relay("relay2", room: "Attic"))
        #expect(await w.wait { version() != moved })
        let relay2 = try #require(w.endpoints.placement(of: w.id("relay2")))
        let attic = try #require(try room("Attic"))
        #expect(attic.endpoints == [relay2.node] && attic.type == 1 && ![garage.id, hall.id].contains(attic.id))
        try w.admin.edit(.moveDevice(w.id("relay2"), to: nil))
        #expect(await w.wait { (try? room("Attic")) == nil })
        #expect(try lists().count == 2)
        await w.endpoints.stop()
        #expect(try lists().isEmpty)
    }

    @Test func endpointStore_neverReusesANumber() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("matter-store-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/hearth.sqlite"
        let store = try HearthDatabase(path: path, extraMigrations: MatterEndpointStore.registerMigrations(in:)).matterEndpointStore()
        let a = try store.assign(["a", "b", "c"], first: 2)
        #expect(a == ["a": 2, "b": 3, "c": 4])
        #expect(try store.assign(["b", "d"], first: 2) == ["b": 3, "d": 5])
        let reopened = try HearthDatabase(path: path, extraMigrations: MatterEndpointStore.registerMigrations(in:)).matterEndpointStore()
        #expect(try reopened.all() == ["a": 2, "b": 3, "c": 4, "d": 5])
        #expect(try reopened.assign(["e"], first: 2) == ["e": 6])
    }
}
