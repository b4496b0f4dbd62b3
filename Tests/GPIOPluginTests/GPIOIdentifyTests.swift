import DriverAPI
import DriverTesting
import Foundation
import GPIOKit
import HomeModel
import Testing

/// Identity and Identify of GPIO lines, on a simulated chip and a manual clock: an output blinks
/// only where its configuration opts in (never by default: it may drive a pump or a heater).
@Suite struct GPIOIdentifyTests {
    let clock = ManualClock()
    let sim = GPIOSimulator()

    func start(_ lines: [Value]) throws -> (TestHost, Task<Void, any Error>) {
        let config: Value = ["simulated": [["chip": "sim0", "lines": 8]], "lines": .list(lines)]
        let host = TestHost(pluginID: "gpio", configuration: config)
        return (host, try host.start(GPIODriverPlugin(clock: clock, simulator: sim)))
    }

    @Test func identify_isAdvertisedOnlyWhereConfigured_andTheConfigurationFillsBasicInformation() async throws {
        let (host, task) = try start([
            ["id": "pump", "chip": "sim0", "line": 1, "role": "relay"],
            ["id": "lamp", "chip": "sim0", "line": 2, "role": "light", "identify": true, "vendor": "Acme", "model": "Porch lamp",
             "serial-number": "PL-0042", "hardware-version": "2"],
            ["id": "door", "chip": "sim0", "line": 3, "role": "contact"],
        ])
        defer { task.cancel() }
        let pump = await host.waitForDevice("pump")
        let lamp = await host.waitForDevice("lamp")
        let door = await host.waitForDevice("door")
        #expect(pump.types[0].traits[IdentifyTrait.identifier] == nil, "a relay may drive a pump: no Identify unless configured")
        #expect(door.types[0].traits[IdentifyTrait.identifier] == nil)
        #expect(lamp.types[0].traits[IdentifyTrait.identifier]?[IdentifyTrait.Attribute.identifyType] == .int(1), "LightOutput")
        #expect(lamp.identity == DeviceIdentity(vendorName: "Acme", productName: "Porch lamp", serialNumber: "PL-0042", hardwareVersion: "2", uniqueID: "gpio-lamp"))
        #expect(pump.identity?.vendorName == "Hearth")
        #expect(pump.identity?.productName == "GPIO relay")
        await #expect(throws: HomeError.self) {
            try await host.command("pump", trait: IdentifyTrait.identifier, command: IdentifyTrait.Command.identify, arguments: ["IdentifyTime": 5])
        }
        #expect(host.refusals.isEmpty, "\(host.refusals)")
    }

    @Test func anInputCannotOptIn() {
        let host = TestHost(pluginID: "gpio", configuration: ["lines": [["chip": "sim0", "line": 3, "role": "contact", "identify": true]]])
        #expect(throws: HomeError.invalidArgument("test.yaml: plugins.gpio.lines[0].identify: only outputs (relay, light, plug) can blink to identify; an input has no way to show itself")) {
            try host.checkConfiguration(of: GPIODriverPlugin(clock: clock, simulator: sim))
        }
    }

    /// Waits (bounded: two seconds) until the simulated line has `level`.
    func lineReaches(_ line: Int, _ level: Bool) async -> Bool {
        for _ in 0..<2000 {
            if sim.level(chip: "sim0", line: "\(line)") == level { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    @Test func identify_blinksTheOutput_thenPutsItBack() async throws {
        let (host, task) = try start([["id": "lamp", "chip": "sim0", "line": 2, "role": "light", "identify": true, "initial": "on"]])
        defer { task.cancel() }
        let onOff = { @Sendable (h: TestHost) in h.value("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) }
        await host.wait { onOff($0) == .bool(true) }
        try await host.command("lamp", trait: IdentifyTrait.identifier, command: IdentifyTrait.Command.identify, arguments: ["IdentifyTime": 2])
        #expect(host.value("lamp", IdentifyTrait.identifier, IdentifyTrait.Attribute.identifyTime) == .int(2))
        // The blink is not reported (it is not the lamp's state): watch the line itself.
        for (step, level) in [false, true, false, true].enumerated() {
            if step > 0 {
                await clock.waitForSleepers(1)
                clock.advance(by: .milliseconds(500))
            }
            #expect(await lineReaches(2, level), "half-second \(step): the line is \(level ? "high" : "low")")
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(500))
        await host.waitForValue("lamp", IdentifyTrait.identifier, IdentifyTrait.Attribute.identifyTime, equals: 0)
        #expect(sim.level(chip: "sim0", line: "2") == true, "back to on")
        #expect(onOff(host) == .bool(true))
    }
}
