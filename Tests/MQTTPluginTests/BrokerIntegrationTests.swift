import DriverAPI
import DriverTesting
import Foundation
import HomeModel
import TestSupport
import Testing
@testable import MQTTPlugin

/// The plugin against a real mosquitto on a free loopback port, driven by real MQTT clients
/// (`mosquitto_pub` child processes and a libmosquitto "device").
@Suite(.serialized) struct BrokerIntegrationTests {
    static func configuration(_ broker: MosquittoBroker, _ extra: [String: Value] = [:]) -> Value {
        var config: [String: Value] = [
            "broker": ["host": "127.0.0.1", "port": .int(Int64(broker.port)), "clientID": "hearth-test", "reconnect": ["minimumDelay": 1, "maximumDelay": 1]]
        ]
        config.merge(extra) { $1 }
        return .object(config)
    }

    /// Starts the plugin on a test host and waits until it is connected and subscribed to discovery.
    static func startPlugin(_ broker: MosquittoBroker, _ extra: [String: Value] = [:]) async throws -> (MQTTPlugin, TestHost, Task<Void, any Error>) {
        let plugin = MQTTPlugin()
        let host = TestHost(pluginID: "mqtt", configuration: configuration(broker, extra))
        let task = try host.start(plugin)
        try await within(20, "the plugin to subscribe to discovery") {
            await host.wait { _ in plugin.acknowledgedSubscriptions.contains("homeassistant/#") }
        }
        return (plugin, host, task)
    }

    /// Waits until the plugin has the broker's acknowledgement for every topic.
    static func waitForSubscriptions(_ plugin: MQTTPlugin, _ host: TestHost, _ topics: Set<String>) async throws {
        try await within(20, "subscriptions to \(topics.sorted())") {
            await host.wait { _ in plugin.acknowledgedSubscriptions.isSuperset(of: topics) }
        }
    }

    @Test(arguments: Fixture.all)
    func discoversEachVendorsDevices_andTheirStateFlowsIntoTheHost(_ name: String) async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let fixture = try Fixture(name)
        // What the pure registry makes of the same messages is what must arrive through the broker.
        let (expected, _) = try ComponentMappingTests.run(name)

        let (plugin, host, task) = try await Self.startPlugin(broker)
        defer { task.cancel() }
        for item in fixture.discovery { try await broker.mosquittoPub(item.topic, item.payload, retain: true) }
        let expectedIDs = Set(expected.devices.keys)
        // Several discovery messages make up one device: wait until every description is complete.
        let expectedDevices = expected.devices
        try await within(20, "the devices of \(name)") {
            await host.wait { h in
                Set(h.devices.keys) == expectedIDs && expectedDevices.values.allSatisfy { h.devices[$0.localID] == $0 }
            }
        }
        try await Self.waitForSubscriptions(plugin, host, Set(fixture.states.map(\.topic)))
        for device in expected.devices.values {
            #expect(host.devices[device.localID] == device, "same description through the broker")
            #expect(device.commission == nil)
        }

        for item in fixture.states { try await broker.mosquittoPub(item.topic, item.payload) }
        // Every attribute of every trait of every device.
        var allKeys: [(String, TraitID, AttributeID)] = []
        for d in expected.devices.values {
            for t in d.types {
                for trait in t.traits.keys {
                    for a in Catalog.standard.trait(trait)?.attributes ?? [] { allKeys.append((d.localID, trait, a.id)) }
                }
            }
        }
        let keys = allKeys
        try await within(20, "the state of \(name)") {
            await host.wait { h in
                h.events.count == expected.events.count
                    && keys.allSatisfy { h.value($0.0, $0.1, $0.2) == expected.value($0.0, $0.1, $0.2) }
                    && expected.devices.keys.allSatisfy { h.connectivity(of: $0) == expected.connectivity(of: $0) }
            }
        }
        #expect(host.events.map(\.event) == expected.events.map(\.event))
        #expect(plugin.malformedPayloads.isEmpty)
    }

    static let plug = #"""
        {"name": "Plug", "cmd_t": "~set", "stat_t": "~state", "avty_t": "~availability", "uniq_id": "plug-1",
         "dev": {"ids": ["plug-1"], "name": "Plug", "mf": "Acme"}, "~": "acme/plug/"}
        """#

    @Test func commandsRoundTrip_andOnlyTheDevicesReportChangesTheState() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let device = try await DeviceClient.retainedPlug(port: broker.port)
        defer { device.stop() }

        let (plugin, host, task) = try await Self.startPlugin(broker)
        defer { task.cancel() }
        try await within {
            await host.wait { $0.value("plug-1", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) && $0.connectivity(of: "plug-1") == .online }
        }

        try await host.command("plug-1", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        let received = try await within { await device.next(on: "acme/plug/set") }
        #expect(received == "ON")
        #expect(host.value("plug-1", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false), "the command itself changes nothing")
        try device.publish("acme/plug/state", "ON", retain: true)
        try await within { await host.wait { $0.value("plug-1", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true) } }

        try device.publish("acme/plug/availability", "offline", retain: true)
        try await within { await host.wait { $0.connectivity(of: "plug-1") == .offline } }
        try device.publish("acme/plug/availability", "online", retain: true)
        try await within { await host.wait { $0.connectivity(of: "plug-1") == .online } }
        #expect(plugin.malformedPayloads.isEmpty)
    }

    @Test func optimisticEntity_takesTheCommandAsItsState() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let device = try DeviceClient(port: broker.port)
        try await device.start()
        defer { device.stop() }
        try await device.subscribe("relay/set")
        let (_, host, task) = try await Self.startPlugin(broker)
        defer { task.cancel() }
        try await broker.mosquittoPub("homeassistant/switch/relay/config", #"{"cmd_t": "relay/set", "opt": true, "uniq_id": "relay"}"#)
        _ = try await within { await host.waitForDevice("relay") }
        try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        #expect(host.value("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        let received = try await within { await device.next(on: "relay/set") }
        #expect(received == "ON")
    }

    @Test func brokerRestart_takesDevicesOffline_thenOnline_withSubscriptionsRestored() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let (plugin, host, task) = try await Self.startPlugin(broker)
        defer { task.cancel() }
        try await broker.mosquittoPub("homeassistant/switch/plug/config", Self.plug, retain: true)
        try await broker.mosquittoPub("acme/plug/availability", "online", retain: true)
        try await within { await host.wait { $0.connectivity(of: "plug-1") == .online } }

        broker.stop()
        try await within { await host.wait { $0.connectivity(of: "plug-1") == .offline } }
        #expect(!plugin.isConnected)
        #expect(!task.isCancelled)

        try await broker.restart()  // a fresh broker: no retained messages, no subscriptions
        try await Self.waitForSubscriptions(plugin, host, ["homeassistant/#", "acme/plug/state", "acme/plug/availability"])
        #expect(host.connectivity(of: "plug-1") == .offline, "availability unknown until the device says so")
        try await broker.mosquittoPub("acme/plug/availability", "online")
        try await broker.mosquittoPub("acme/plug/state", "ON")
        try await within {
            await host.wait { $0.connectivity(of: "plug-1") == .online && $0.value("plug-1", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true) }
        }
        #expect(host.logLines.contains { $0.contains("lost the MQTT broker") })
        #expect(host.counted("reconnects") == 1, "one reconnect after the first connection (hearth_mqtt_reconnects_total)")
    }

    @Test func unreachableBroker_isRetriedWithBackoff_untilItComesUp() async throws {
        let port = try MosquittoBroker.freeLoopbackPort()
        let plugin = MQTTPlugin()
        let host = TestHost(
            pluginID: "mqtt",
            configuration: ["broker": ["port": .int(Int64(port)), "reconnect": ["minimumDelay": 1, "maximumDelay": 1]]])
        let task = try host.start(plugin)
        defer { task.cancel() }
        try await within(20, "a log line saying the broker cannot be reached") {
            await host.wait { $0.logLines.contains { $0.contains("cannot reach the MQTT broker") } }
        }
        #expect(!plugin.isConnected)
        let broker = try await MosquittoBroker(port: port)
        defer { broker.stop() }
        try await within(20, "the plugin to connect once the broker is up") {
            await host.wait { _ in plugin.acknowledgedSubscriptions.contains("homeassistant/#") }
        }
        #expect(plugin.isConnected)
        #expect(host.counted("reconnects") == 0, "failed attempts before the first connection are not reconnects")
    }

    @Test func hostilePayloads_areCountedAndLogged_andTheLastGoodStateStays() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let device = try DeviceClient(port: broker.port)
        try await device.start()
        defer { device.stop() }
        let (plugin, host, task) = try await Self.startPlugin(broker)
        defer { task.cancel() }
        try device.publish(
            "homeassistant/sensor/th/config",
            #"{"stat_t": "th/state", "val_tpl": "{{ value_json.t }}", "dev_cla": "temperature", "uniq_id": "th"}"#)
        _ = try await within { await host.waitForDevice("th") }
        try await Self.waitForSubscriptions(plugin, host, ["th/state"])
        try device.publish("th/state", #"{"t": 20}"#)
        try await within { await host.wait { $0.value("th", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue) == .int(2000) } }

        let hostile: [[UInt8]] = [
            Array(repeating: UInt8(ascii: "a"), count: 1_000_000),
            [0x00, 0xFF, 0xFE, 0x7B, 0x22],
            Array(String(repeating: "{\"a\":", count: 10_000).utf8),
            Array(#"{"t": {"nested": true}}"#.utf8),
            Array(#"{"t": "1e400"}"#.utf8),
            Array(#"["t", 20]"#.utf8),
            [],
        ]
        for payload in hostile { try device.connection.publish("th/state", payload: payload, qos: 1) }
        // Hostile discovery messages: not JSON, a list, a huge one, an unknown component.
        for (topic, payload) in [
            ("homeassistant/sensor/x1/config", "\u{0}\u{1}"), ("homeassistant/sensor/x2/config", "[1,2]"),
            ("homeassistant/sensor/x3/config", String(repeating: "x", count: 400_000)), ("homeassistant/siren/x4/config", "{}"),
        ] {
            try device.publish(topic, payload)
        }
        try device.publish("th/state", #"{"t": 21.5}"#)
        try await within { await host.wait { $0.value("th", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue) == .int(2150) } }
        #expect(plugin.malformedPayloads["sensor/th"] == hostile.count)
        #expect(host.counted("malformed_payloads") == hostile.count, "hearth_mqtt_malformed_payloads_total counts every one")
        #expect(host.counted("refused_discovery_payloads") == 4)
        #expect(host.logLines.filter { $0.contains("refused payload") }.count == 1)
        #expect(host.logLines.filter { $0.contains("discovery homeassistant/") }.count == 4)
        #expect(plugin.isConnected)
        #expect(host.devices.count == 1)
    }

    @Test func connectsOverTLS_trustingTheConfiguredCA_andRefusesAnotherCA() async throws {
        let broker = try await MosquittoBroker(tls: true)
        defer { broker.stop() }
        let (plugin, host, task) = try await Self.startPlugin(broker, ["broker": [
            "host": "127.0.0.1", "port": .int(Int64(broker.port)), "caFile": .string(broker.caFile),
            "reconnect": ["minimumDelay": 1, "maximumDelay": 1],
        ]])
        defer { task.cancel() }
        try await broker.mosquittoPub("homeassistant/switch/plug/config", Self.plug, retain: true, tls: true)
        _ = try await within { await host.waitForDevice("plug-1") }
        #expect(plugin.isConnected)

        // A client that trusts another CA never connects, and says why.
        let other = try await MosquittoBroker(tls: true)
        defer { other.stop() }
        let stranger = MQTTPlugin()
        let strangerHost = TestHost(
            pluginID: "mqtt",
            configuration: ["broker": ["port": .int(Int64(broker.port)), "caFile": .string(other.caFile), "reconnect": ["minimumDelay": 1, "maximumDelay": 1]]])
        let strangerTask = try strangerHost.start(stranger)
        defer { strangerTask.cancel() }
        try await within(20, "a log line about the failed TLS connection") {
            await strangerHost.wait { $0.logLines.contains { $0.contains("cannot reach the MQTT broker") && $0.contains("TLS") } }
        }
        #expect(!stranger.isConnected)
    }
}
