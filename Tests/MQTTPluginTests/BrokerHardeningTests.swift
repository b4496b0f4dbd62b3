import DriverAPI
import DriverTesting
import Foundation
import HomeModel
import TestSupport
import Testing
@testable import MQTTPlugin

/// Hostile discovery messages against a real mosquitto (#14): a topic the broker would refuse
/// must never reach it, because mosquitto answers a malformed SUBSCRIBE by dropping the whole
/// connection, and with a retained config it did so again after every reconnect.
@Suite(.serialized) struct BrokerHardeningTests {
    @Test func emptyOrNULTopics_areRefused_andOtherDevicesStayOnline() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let device = try await DeviceClient.retainedPlug(port: broker.port)
        defer { device.stop() }
        // Retained, as an attacker (or a broken firmware) would leave them.
        let hostile = [
            ("homeassistant/binary_sensor/empty/config", #"{"stat_t": "", "uniq_id": "empty"}"#),
            ("homeassistant/binary_sensor/nul/config", #"{"stat_t": "\u0000abc", "uniq_id": "nul"}"#),
            ("homeassistant/switch/avty/config", #"{"cmd_t": "x/set", "avty_t": "", "uniq_id": "avty"}"#),
            ("homeassistant/sensor/wild/config", #"{"stat_t": "a/#/b", "dev_cla": "temperature", "uniq_id": "wild"}"#),
        ]
        for (topic, config) in hostile { try await broker.mosquittoPub(topic, config, retain: true) }

        let (plugin, host, task) = try await BrokerIntegrationTests.startPlugin(broker)
        defer { task.cancel() }
        try await within(20, "the plug online") {
            await host.wait { $0.value("plug-1", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) && $0.connectivity(of: "plug-1") == .online }
        }
        try await within(20, "the four refusals") {
            await host.wait { h in hostile.allSatisfy { item in h.logLines.contains { $0.contains("discovery \(item.0)") } } }
        }
        // The old failure dropped the connection about once a second: give it the chance.
        try await Task.sleep(for: .seconds(3))
        try device.publish("acme/plug/state", "ON", retain: true)
        try await within(20, "the plug's new state") {
            await host.wait { $0.value("plug-1", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true) }
        }
        #expect(host.connectivity(of: "plug-1") == .online)
        #expect(host.counted("reconnects") == 0)
        #expect(!host.logLines.contains { $0.contains("lost the MQTT broker") })
        #expect(plugin.isConnected)
        let lines = host.logLines
        #expect(lines.contains { $0.contains("discovery homeassistant/binary_sensor/empty/config") && $0.contains("field 'state_topic'") && $0.contains("is empty") })
        #expect(lines.contains { $0.contains("discovery homeassistant/binary_sensor/nul/config") && $0.contains("U+0000") })
        #expect(lines.contains { $0.contains("discovery homeassistant/switch/avty/config") && $0.contains("field 'availability_topic'") })
        #expect(lines.contains { $0.contains("discovery homeassistant/sensor/wild/config") && $0.contains("'#'") })
        #expect(Set(host.devices.keys) == ["plug-1"])
    }

    @Test func wildcardStateTopics_routeTheMessagesTheyMatch() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let (_, host, task) = try await BrokerIntegrationTests.startPlugin(broker)
        defer { task.cancel() }
        try await broker.mosquittoPub(
            "homeassistant/binary_sensor/door/config",
            #"{"stat_t": "house/+/door", "dev_cla": "door", "uniq_id": "door", "dev": {"ids": "door"}}"#)
        _ = try await within { await host.waitForDevice("door") }
        // Publish until the subscription is live (the broker acknowledges it asynchronously).
        try await within(20, "a message on a matching topic to arrive") {
            while host.value("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) != .bool(false) {
                try await broker.mosquittoPub("house/hall/door", "ON")
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        try await broker.mosquittoPub("house/kitchen/door", "OFF")
        try await within { await host.waitForValue("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, equals: .bool(true)) }
    }
}

/// Commands to a broker that stops answering (SIGSTOP), against a real mosquitto.
@Suite(.serialized) struct BrokerHangTests {
    @Test func commandToAHungBroker_failsWithTimeout_andIsNotSentAgainLater() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let device = try await DeviceClient.retainedPlug(port: broker.port)
        defer { device.stop() }
        let (plugin, host, task) = try await BrokerIntegrationTests.startPlugin(
            broker, ["broker": ["host": "127.0.0.1", "port": .int(Int64(broker.port)), "clientID": "hearth-test",
                                "reconnect": ["minimumDelay": 1, "maximumDelay": 1], "commandTimeout": 1]])
        defer { task.cancel() }
        try await within { await host.wait { $0.connectivity(of: "plug-1") == .online } }
        // Acknowledged commands succeed.
        try await host.command("plug-1", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        #expect(try await within { await device.next(on: "acme/plug/set") } == "ON")

        broker.suspend()
        let started = ContinuousClock.now
        await #expect(throws: HomeError.self) {
            try await host.command("plug-1", trait: OnOffTrait.identifier, command: OnOffTrait.Command.off)
        }
        let waited = ContinuousClock.now - started
        // At least the 1 s timeout; the upper bound only tells "timed out" from "waited for the
        // broker" (a loaded CI machine can be seconds late, the hung broker is away for good).
        #expect(waited >= .seconds(1) && waited < .seconds(20), "failed after the 1 s command timeout, not hung: \(waited)")
        #expect(host.counted("command_timeouts") == 1)
        do {
            try await host.command("plug-1", trait: OnOffTrait.identifier, command: OnOffTrait.Command.off)
            Issue.record("a command to a broker known to hang must fail")
        } catch let error as HomeError {
            #expect(error.code == .timeout || error.code == .deviceOffline, "\(error)")
        }
        broker.resume()
        try await within(20, "the plugin to reconnect") { await host.wait { _ in plugin.isConnected } }
        // What the broker already read before it froze it may still deliver (TCP cannot take it
        // back); the plugin itself must not send the failed command again: at most one OFF.
        try await Task.sleep(for: .seconds(3))
        try device.publish("acme/plug/set", "probe-end")
        let offs = try await within(20, "the probe") { () async -> Int in
            var n = 0
            for await m in device.received where m.topic == "acme/plug/set" {
                if m.payload == "OFF" { n += 1 }
                if m.payload == "probe-end" { break }
            }
            return n
        }
        #expect(offs <= 1, "the timed-out command was sent again: \(offs) OFF messages")
    }
}
