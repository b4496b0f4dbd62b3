import DriverAPI
import DriverTesting
import Foundation
import GPIOKit
import HomeModel
import Testing

/// The whole plugin against simulated chips, through the in-memory host, on a manual clock.
@Suite struct GPIOPluginSimulatedTests {
    let clock = ManualClock()
    let sim = GPIOSimulator()
    /// Stands in for the kernel's chips: a second simulator, so chips can be missing and appear.
    let hardware = GPIOSimulator()

    func start(_ lines: [Value], extra: [String: Value] = [:]) throws -> (TestHost, Task<Void, any Error>) {
        var config: [String: Value] = ["simulated": [["chip": "sim0", "lines": 8]], "lines": .list(lines), "retry": "5s"]
        config.merge(extra) { _, new in new }
        let host = TestHost(pluginID: "gpio", configuration: .object(config))
        let plugin = GPIODriverPlugin(clock: clock, simulator: sim, hardware: SimulatedGPIOBackend(simulator: hardware))
        return (host, try host.start(plugin))
    }

    func stop(_ task: Task<Void, any Error>) async {
        task.cancel()
        _ = await task.result
    }

    func events(_ host: TestHost, _ id: String) -> [EventID] { host.events.filter { $0.localID == id }.map(\.event) }

    @Test func contactReportsLogicalLevel_activeLowAndPullUpBias() async throws {
        let (host, task) = try start([["id": "door", "chip": "sim0", "line": 1, "role": "contact", "active-low": true, "bias": "pull-up"]])
        let state = { @Sendable (h: TestHost) in h.value("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) }
        // pull-up bias: the line reads high, active-low makes that "no contact"
        await host.wait { state($0) == .bool(false) }
        #expect(sim.level(chip: "sim0", line: "1") == true)
        #expect(host.devices["door"]?.types.first?.id == ContactSensorDeviceType.identifier)
        try sim.setPull(chip: "sim0", line: "1", high: false)
        await host.wait { state($0) == .bool(true) }
        try sim.setPull(chip: "sim0", line: "GPIO1", high: true)
        await host.wait { state($0) == .bool(false) }
        await stop(task)
        #expect(sim.consumer(chip: "sim0", line: "1") == nil, "the line is released when the plugin stops")
    }

    @Test func softwareDebounce_reportsOnlyAfterTheLevelHeld() async throws {
        let (host, task) = try start([["id": "leak", "chip": "sim0", "line": 2, "role": "leak", "debounce": "20ms"]])
        let state = { @Sendable (h: TestHost) in h.value("leak", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) }
        await host.wait { state($0) == .bool(false) }
        try sim.setPull(chip: "sim0", line: "2", high: true)
        try sim.setPull(chip: "sim0", line: "2", high: false)  // a bounce
        try sim.setPull(chip: "sim0", line: "2", high: true)
        await clock.waitForSleepers(1)
        #expect(state(host) == .bool(false))
        clock.advance(by: .milliseconds(20))
        await host.wait { state($0) == .bool(true) }
        #expect(host.counted("events") == 3, "every edge, bounces included, counts in hearth_gpio_events_total")
        await stop(task)
    }

    @Test func button_emitsSwitchEvents_withLongPressOnTheClock() async throws {
        let (host, task) = try start([
            ["id": "bell", "chip": "sim0", "line": 3, "role": "button", "long-press": "1s", "multi-press-window": "300ms"]
        ])
        _ = await host.waitForDevice("bell")
        await host.wait { $0.value("bell", SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(0) }
        try sim.setPull(chip: "sim0", line: "3", high: true)
        await host.wait { self.events($0, "bell") == [SwitchTrait.Event.initialPress] }
        #expect(host.value("bell", SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(1))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await host.wait { self.events($0, "bell").last == SwitchTrait.Event.longPress }
        try sim.setPull(chip: "sim0", line: "3", high: false)
        await host.wait { self.events($0, "bell").last == SwitchTrait.Event.longRelease }
        #expect(events(host, "bell") == [SwitchTrait.Event.initialPress, SwitchTrait.Event.longPress, SwitchTrait.Event.longRelease])
        let press = try #require(host.events.first)
        #expect(press.fields["NewPosition"] == .int(1))
        let now = UInt64(Date().timeIntervalSince1970 * 1e9)
        let stamp = try #require(press.timestampNanoseconds)
        #expect(stamp <= now && now - stamp < 60_000_000_000, "the kernel-style timestamp is converted to Unix time")
        await stop(task)
    }

    @Test func button_doublePress_completesWithTotalTwo() async throws {
        let (host, task) = try start([["id": "b", "chip": "sim0", "line": 3, "role": "button", "multi-press-window": "300ms"]])
        await host.wait { $0.value("b", SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(0) }
        for _ in 0..<2 {
            try sim.setPull(chip: "sim0", line: "3", high: true)
            try sim.setPull(chip: "sim0", line: "3", high: false)
        }
        await host.wait { self.events($0, "b").count == 5 }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(300))
        await host.wait { self.events($0, "b").last == SwitchTrait.Event.multiPressComplete }
        #expect(
            events(host, "b") == [
                SwitchTrait.Event.initialPress, SwitchTrait.Event.shortRelease, SwitchTrait.Event.initialPress,
                SwitchTrait.Event.multiPressOngoing, SwitchTrait.Event.shortRelease, SwitchTrait.Event.multiPressComplete,
            ])
        #expect(host.events.last?.fields["TotalNumberOfPressesCounted"] == .int(2))
        await stop(task)
    }

    @Test func toggleSwitch_emitsSwitchLatched_withNewPosition() async throws {
        let (host, task) = try start([["id": "t", "chip": "sim0", "line": 4, "role": "toggle-switch"]])
        await host.wait { $0.value("t", SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(0) }
        try sim.setPull(chip: "sim0", line: "4", high: true)
        await host.wait { $0.events.count == 1 }
        #expect(host.events[0].event == SwitchTrait.Event.switchLatched)
        #expect(host.events[0].fields["NewPosition"] == .int(1))
        #expect(host.value("t", SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(1))
        #expect(host.devices["t"]?.types.first?.traits[SwitchTrait.identifier]?[0xFFFC] == .int(1), "FeatureMap: LatchingSwitch")
        await stop(task)
    }

    @Test func motion_holdsOccupancy_untilHoldOnRunsOut() async throws {
        let (host, task) = try start([["id": "pir", "chip": "sim0", "line": 5, "role": "motion", "hold-on": "30s"]])
        let occupancy = { @Sendable (h: TestHost) in h.value("pir", OccupancySensingTrait.identifier, OccupancySensingTrait.Attribute.occupancy) }
        await host.wait { occupancy($0) == .int(0) }
        try sim.setPull(chip: "sim0", line: "5", high: true)
        await host.wait { occupancy($0) == .int(1) }
        try sim.setPull(chip: "sim0", line: "5", high: false)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(29))
        #expect(occupancy(host) == .int(1))
        clock.advance(by: .seconds(1))
        await host.wait { occupancy($0) == .int(0) }
        #expect(host.devices["pir"]?.types.first?.traits[OccupancySensingTrait.identifier]?[OccupancySensingTrait.Attribute.holdTime] == .int(30))
        await stop(task)
    }

    @Test func relay_activeLow_drivesInvertedLevel_andConfirmsByReadingBack() async throws {
        let (host, task) = try start([
            ["id": "relay", "chip": "sim0", "line": 6, "role": "relay", "active-low": true, "name": "Pump", "room": "Garden"]
        ])
        let onOff = { @Sendable (h: TestHost) in h.value("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) }
        await host.wait { onOff($0) == .bool(false) }
        #expect(sim.level(chip: "sim0", line: "6") == true, "off on an active-low board drives the line high")
        #expect(host.devices["relay"]?.commission == CommissionHint(name: "Pump", room: "Garden"))
        #expect(host.devices["relay"]?.types.first?.id == OnOffPlugInUnitDeviceType.identifier)
        try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        #expect(onOff(host) == .bool(true))
        #expect(sim.level(chip: "sim0", line: "6") == false)
        try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle)
        #expect(onOff(host) == .bool(false))
        #expect(sim.level(chip: "sim0", line: "6") == true)
        await #expect(throws: HomeError.self) {
            try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.offWithEffect)
        }
        await stop(task)
    }

    @Test func light_initialOn_andStatusLineReportsRealState() async throws {
        let (host, task) = try start([["id": "lamp", "chip": "sim0", "line": 6, "status-line": 7, "role": "light", "initial": "on"]])
        let onOff = { @Sendable (h: TestHost) in h.value("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) }
        await host.wait { onOff($0) != nil }
        #expect(sim.level(chip: "sim0", line: "6") == true)
        #expect(onOff(host) == .bool(false), "the status input (pulled down) says the lamp is off")
        try sim.setPull(chip: "sim0", line: "7", high: true)
        await host.wait { onOff($0) == .bool(true) }
        #expect(host.devices["lamp"]?.types.first?.id == OnOffLightDeviceType.identifier)
        await stop(task)
    }

    @Test func busyLine_isReportedWithChipAndLine_whileOtherLinesWork() async throws {
        sim.addChip("sim0", lineNames: (0..<8).map { "GPIO\($0)" })
        sim.hold(chip: "sim0", line: "3", consumer: "other-process")
        let (host, task) = try start([
            ["id": "relay", "chip": "sim0", "line": 3, "role": "relay"],
            ["id": "door", "chip": "sim0", "line": 4, "role": "contact"],
        ])
        await host.wait { $0.connectivity(of: "relay") == .offline }
        #expect(host.logLines.contains { $0.contains("line 3 of simulated GPIO chip sim0 is busy: held by 'other-process'") })
        try sim.setPull(chip: "sim0", line: "4", high: true)
        await host.wait { $0.value("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true) }
        await #expect {
            try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        } throws: { error in
            (error as? HomeError)?.code == .deviceOffline && "\(error)".contains("busy")
        }
        await stop(task)
    }

    @Test func missingChip_isRetried_andWorksOnceItAppears() async throws {
        let (host, task) = try start([["id": "usb", "chip": "usb-expander", "line": "IN0", "role": "contact"]])
        await host.wait { $0.connectivity(of: "usb") == .offline }
        #expect(host.logLines.contains { $0.contains("'usb-expander'") && $0.contains("not present") && $0.contains("trying again") })
        hardware.addChip("usb-expander", lineNames: ["IN0", "IN1"])
        try hardware.setPull(chip: "usb-expander", line: "IN0", high: true)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        await host.wait { $0.connectivity(of: "usb") == .online }
        #expect(host.value("usb", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true))
        try hardware.setPull(chip: "usb-expander", line: "IN0", high: false)
        await host.wait { $0.value("usb", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(false) }
        await stop(task)
    }

    @Test func invalidOffset_isReportedOnce_andNotRetried() async throws {
        let (host, task) = try start([
            ["id": "far", "chip": "sim0", "line": 99, "role": "contact"],
            ["id": "near", "chip": "sim0", "line": "GPIO9", "role": "contact"],
            ["id": "ok", "chip": "sim0", "line": 0, "role": "contact"],
        ])
        await host.wait { $0.value("ok", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) != nil }
        await host.wait { $0.connectivity(of: "far") == .offline && $0.connectivity(of: "near") == .offline }
        #expect(host.logLines.contains { $0.contains("line 99 of GPIO chip sim0") && $0.contains("only 8 lines") })
        #expect(host.logLines.contains { $0.contains("no line named 'GPIO9'") })
        #expect(clock.sleeperCount == 0, "nothing to retry")
        await stop(task)
    }

    @Test func restore_keepsTheLastCommandedStateAcrossRuns() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-gpio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let line: Value = ["id": "heater", "chip": "sim0", "line": 2, "role": "plug", "initial": "restore"]
        let extra: [String: Value] = ["state-file": .string(dir.appendingPathComponent("state.json").path)]
        do {
            let (host, task) = try start([line], extra: extra)
            await host.wait { $0.value("heater", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) }
            try await host.command("heater", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
            await stop(task)
        }
        let again = GPIOSimulator()
        let host = TestHost(
            pluginID: "gpio",
            configuration: .object(["simulated": [["chip": "sim0", "lines": 4]], "lines": [line]].merging(extra) { a, _ in a }))
        let task = try host.start(GPIODriverPlugin(clock: clock, simulator: again))
        await host.wait { $0.value("heater", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true) }
        #expect(again.level(chip: "sim0", line: "2") == true)
        await stop(task)
    }

    @Test func controlFIFO_drivesPulls_andStateFileShowsOutputs() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-gpio-sim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let host = TestHost(
            pluginID: "gpio",
            configuration: [
                "simulated": [["chip": "sim0", "lines": ["DOOR", "RELAY"], "control": .string(dir.path)]],
                "lines": [
                    ["id": "door", "chip": "sim0", "line": "DOOR", "role": "contact"],
                    ["id": "relay", "chip": "sim0", "line": "RELAY", "role": "relay"],
                ],
            ])
        let task = try host.start(GPIODriverPlugin(clock: clock, simulator: sim))
        await host.wait { $0.value("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) }
        let fifo = dir.appendingPathComponent("control").path
        #expect(FileManager.default.fileExists(atPath: fifo), "the FIFO exists once the devices are published")
        let writer = try #require(FileHandle(forWritingAtPath: fifo))
        try writer.write(contentsOf: Data("sim0 DOOR pull-up\n".utf8))
        try writer.close()
        await host.wait { $0.value("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true) }
        try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        let state = try String(contentsOfFile: dir.appendingPathComponent("state").path, encoding: .utf8)
        #expect(state.contains("sim0 1 RELAY output value=1"), "\(state)")
        #expect(state.contains("sim0 0 DOOR input value=1"), "\(state)")
        await stop(task)
    }

    @Test func chipThatDisappears_marksItsDevicesOffline_andIsAcquiredAgainWhenItReturns() async throws {
        hardware.addChip("usb0", lineNames: ["IN0", "OUT0"])
        let (host, task) = try start([
            ["id": "door", "chip": "usb0", "line": "IN0", "role": "contact"],
            ["id": "relay", "chip": "usb0", "line": "OUT0", "role": "relay"],
            ["id": "ok", "chip": "sim0", "line": 0, "role": "contact"],
        ])
        await host.wait { $0.connectivity(of: "door") == .online && $0.connectivity(of: "relay") == .online }
        await host.wait { $0.value("ok", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) != nil }
        hardware.setPresent("usb0", false)  // unplugged
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))  // the chips are looked at every `retry`
        await host.wait { $0.connectivity(of: "door") == .offline && $0.connectivity(of: "relay") == .offline }
        #expect(host.logLines.contains { $0.contains("GPIO chip 'usb0' (usb0, usb0) is gone") }, "\(host.logLines)")
        #expect(host.connectivity(of: "ok") == .online, "devices on other chips are untouched")
        #expect(hardware.consumer(chip: "usb0", line: "IN0") == nil, "the dead lines were released")
        await #expect(throws: HomeError.self) {
            try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        }
        hardware.setPresent("usb0", true)  // plugged in again
        try hardware.setPull(chip: "usb0", line: "IN0", high: true)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        await host.wait { $0.connectivity(of: "door") == .online && $0.connectivity(of: "relay") == .online }
        await host.wait { $0.value("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true) }
        try hardware.setPull(chip: "usb0", line: "IN0", high: false)
        await host.wait { $0.value("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(false) }
        try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        #expect(hardware.level(chip: "usb0", line: "OUT0") == true)
        await stop(task)
    }

    @Test func chatteringLine_forMinutes_isRateLimited_withOneWarningNamingChipAndLine_andKeepsItsLastGoodState() async throws {
        // A toggle switch emits SwitchLatched for every change that reaches the home, so the
        // events count exactly what got through. Every change reaches the guard at once (as
        // with kernel debounce); each level holds 25 ms, for two minutes on the manual clock.
        let (host, task) = try start([["id": "sw", "chip": "sim0", "line": "GPIO2", "role": "toggle-switch"]])
        let position = { @Sendable (h: TestHost) in h.value("sw", SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) }
        await host.wait { position($0) == .int(0) }
        clock.advance(by: .seconds(60))  // steady (off) for a minute
        var high = false
        for _ in 0..<(120_000 / 25) {
            high.toggle()
            try sim.setPull(chip: "sim0", line: "GPIO2", high: high)
            clock.advance(by: .milliseconds(25))
        }
        let warnings = host.logLines.filter { $0.contains("chatters") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.hasPrefix("warning: GPIO device 'sw' (line GPIO2 of chip sim0) chatters") == true, "\(warnings)")
        #expect(host.events.count <= 25, "at most the limit of changes reached the home, not \(host.events.count)")
        #expect(position(host) == .int(0), "the last good state is kept")
        #expect(host.counted("events") == 4800, "hearth_gpio_events_total still counts every edge the kernel delivered")
        // The contact settles on (the last toggle left it low: pull it up) and holds for 10 s.
        try sim.setPull(chip: "sim0", line: "GPIO2", high: true)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(10))
        await host.wait { position($0) == .int(1) }
        #expect(host.logLines.contains { $0.contains("GPIO device 'sw' (line GPIO2 of chip sim0) is steady again") })
        await stop(task)
    }

    @Test func aLineWithTheChatterGuardOff_passesEveryChange_andNeverWarns() async throws {
        // A pulse line (a flow meter): 400 changes within 10 s is its job, not a fault.
        let (host, task) = try start([["id": "pulse", "chip": "sim0", "line": "GPIO3", "role": "toggle-switch", "chatter-guard": false]])
        let position = { @Sendable (h: TestHost) in h.value("pulse", SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) }
        await host.wait { position($0) == .int(0) }
        var high = false
        for _ in 0..<400 {
            high.toggle()
            try sim.setPull(chip: "sim0", line: "GPIO3", high: high)
            clock.advance(by: .milliseconds(25))
        }
        await host.wait { $0.events.count == 400 }
        #expect(host.events.count == 400, "every change reached the home")
        #expect(!host.logLines.contains { $0.contains("chatters") }, "\(host.logLines)")
        #expect(position(host) == .int(0))
        await stop(task)
    }
}
