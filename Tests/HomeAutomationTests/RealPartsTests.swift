import DriverAPI
import DriverTesting
import Foundation
import HashTreeCollections
import Synchronization
import GPIOKit
import HomeAutomation
import HomeCore
import HomeModel
import MQTTPlugin
import TestSupport
import Testing

/// Hands the core's commands to a plugin run in-process (as the plugin host does).
final class InProcessHandler: CommandHandler {
    let plugin: any DriverPlugin
    let context: any DriverContext
    init(_ plugin: any DriverPlugin, _ context: any DriverContext) {
        self.plugin = plugin
        self.context = context
    }
    func handle(_ command: DriverCommand) async throws -> Value { try await plugin.handle(command, context: context) }
    func write(_ write: DriverWrite) async throws { try await plugin.write(write, context: context) }
}

/// Polls the core (bounded) until `condition` holds.
func until(_ what: String, _ condition: () -> Bool) async throws {
    for _ in 0..<2000 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    Issue.record("timed out waiting for \(what)")
    throw CancellationError()
}

@Suite(.timeLimit(.minutes(1))) struct RealPartsTests {
    /// A button on the simulated GPIO chip switches a relay line through an automation.
    @Test func gpioButton_switchesARelay_throughAnAutomation() async throws {
        let sim = GPIOSimulator()
        let gpioClock = ManualClock()  // the plugin's own clock; the engine has another
        let plugin = GPIODriverPlugin(clock: gpioClock, simulator: sim)
        let config: Value = [
            "simulated": [["chip": "sim0", "lines": 8]],
            "lines": [
                ["id": "bell", "chip": "sim0", "line": 3, "role": "button", "name": "Hall Button", "room": "Hall"],
                ["id": "relay", "chip": "sim0", "line": 6, "role": "relay", "name": "Hall Relay", "room": "Hall"],
            ],
        ]
        let core = HomeCore()
        let context = core.context(for: "gpio", configuration: PluginConfiguration(value: config))
        core.setCommandHandler(InProcessHandler(plugin, context), for: "gpio")
        let run = Task { try await plugin.run(context: context) }
        defer { run.cancel() }
        try await until("the relay commissioned") { core.state.commissioned["gpio:relay"] != nil && core.state.commissioned["gpio:bell"] != nil }

        let engine = AutomationEngine(core: core, clock: TestAutomationClock())
        let service = Task { await engine.run() }
        defer { service.cancel() }
        try await engine.save(
            .json("""
                {"id": "bell-relay", "name": "Bell toggles relay",
                 "starters": [{"id": "press", "event": {"device": "gpio:bell", "trait": "Switch", "event": "InitialPress"}}],
                 "actions": [{"command": {"device": "gpio:relay", "trait": "OnOff", "command": "Toggle"}}]}
                """), as: admin)
        await engine.start()
        #expect(sim.level(chip: "sim0", line: "6") == false)
        try sim.setPull(chip: "sim0", line: "3", high: true)
        await engine.waitForTraces { $0["bell-relay"]?.last?.outcome == .completed }
        #expect(sim.level(chip: "sim0", line: "6") == true, "the relay line is driven high")
        try sim.setPull(chip: "sim0", line: "3", high: false)
        try sim.setPull(chip: "sim0", line: "3", high: true)
        await engine.waitForTraces { ($0["bell-relay"] ?? []).filter { $0.outcome == .completed }.count == 2 }
        #expect(sim.level(chip: "sim0", line: "6") == false)
        let trace = try #require(try await engine.runs("bell-relay", as: admin).first)
        #expect(trace.steps.first?.detail.contains("gpio:relay OnOff.Toggle") == true)
    }

    /// An MQTT temperature sensor (real mosquitto, the MQTT plugin) crossing a threshold with
    /// hysteresis: the automation fires on entering, not again inside the band.
    @Test func mqttSensor_crossingAThreshold_withHysteresis() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let plugin = MQTTPlugin()
        let config: Value = [
            "broker": ["host": "127.0.0.1", "port": .int(Int64(broker.port)), "clientID": "hearth-automation-test", "reconnect": ["minimumDelay": 1, "maximumDelay": 1]],
            "devices": [[
                "id": "greenhouse", "name": "Greenhouse", "room": "Garden", "deviceType": "Temperature Sensor",
                "attributes": [["trait": "Temperature Measurement", "attribute": "MeasuredValue", "topic": "gh/temp", "unit": "celsius"]],
            ]],
        ]
        let core = HomeCore()
        let context = core.context(for: "mqtt", configuration: PluginConfiguration(value: config))
        core.setCommandHandler(InProcessHandler(plugin, context), for: "mqtt")
        let lamp = core.context(for: "p")
        let hardware = FakeHardware(context: lamp)
        core.setCommandHandler(hardware, for: "p")
        lamp.publish(Devices.lamp("heater", name: "Heater Plug"))
        let run = Task { try await plugin.run(context: context) }
        defer { run.cancel() }
        try await until("the sensor commissioned") { core.state.commissioned["mqtt:greenhouse"] != nil }
        // The explicit device is commissioned before the plugin has connected: a value published
        // before the broker acknowledged the subscription would be lost (not retained).
        try await until("the plugin subscribed to gh/temp") { plugin.acknowledgedSubscriptions.contains("gh/temp") }

        let engine = AutomationEngine(core: core, clock: TestAutomationClock())
        let service = Task { await engine.run() }
        defer { service.cancel() }
        try await engine.save(
            .json("""
                {"id": "frost", "name": "Frost guard", "mode": "parallel",
                 "starters": [{"attribute": {"device": "mqtt:greenhouse", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "below": 200, "hysteresis": 50}}],
                 "actions": [{"command": {"device": "p:heater", "trait": "OnOff", "command": "Toggle"}}]}
                """), as: admin)
        await engine.start()
        let measured = { core.state.devices["mqtt:greenhouse"]?.types.first?.traits[TemperatureMeasurementTrait.identifier]?.attributes[TemperatureMeasurementTrait.Attribute.measuredValue] }
        for celsius in ["5", "1.5", "1.0", "2.2", "1.8", "3.0", "1.9"] {
            try await broker.mosquittoPub("gh/temp", celsius)
            let want = Value.int(Int64((Double(celsius)! * 100).rounded()))
            try await until("\(celsius) °C in the core") { measured() == want }
        }
        await engine.waitForVersion(core.state.version)
        await engine.waitForTraces { ($0["frost"] ?? []).filter { $0.outcome != .running }.count == 2 }
        let fired = try await engine.runs("frost", as: admin).reversed().map { $0.cause.new }
        #expect(fired == [.int(150), .int(190)], "1.5 enters; 1.0, 2.2, 1.8 stay in the band; 3.0 re-arms; 1.9 enters")
        #expect(hardware.commands.count == 2)
    }
}
