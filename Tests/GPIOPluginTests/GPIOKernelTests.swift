import DriverAPI
import Foundation
import GPIOKit
import HomeAutomation
import HomeCore
import HomeModel
import PluginHost
import Synchronization
import Testing
import TestSupport

/// The real plugin `.so`, loaded with `dlopen`, against a real kernel's gpio-sim chip, reporting
/// into a real `HomeCore`. Runs inside the VM of `scripts/test-gpio-kernel`
/// (`../shared/tools/with-gpio-sim`), which sets `GPIO_SIM_CHIP` and `GPIO_SIM_SYSFS`.
@Suite(
    .serialized,
    .enabled(
        if: GPIOSimEnvironment.chip != nil,
        "GPIO kernel tests skipped: GPIO_SIM_CHIP is not set (no gpio-sim chip here); scripts/test-gpio-kernel runs them in a VM"))
struct GPIOKernelTests {
    static var chip: String? { GPIOSimEnvironment.chip }
    static var sysfs: String { GPIOSimEnvironment.sysfs }
    static var label: String { GPIOSimEnvironment.label }

    /// gpio-sim's per-line attributes: `pull` drives an input, `value` shows an output.
    static func setPull(_ line: Int, _ pull: String) throws {
        try Data(pull.utf8).write(to: URL(fileURLWithPath: "\(sysfs)/sim_gpio\(line)/pull"))
    }

    static func read(_ line: Int, _ attribute: String) throws -> String {
        try String(contentsOfFile: "\(sysfs)/sim_gpio\(line)/\(attribute)", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A running plugin from its `.so`, reporting into a core.
    struct Running {
        let core: HomeCore
        let home: Home
        let tap: Tap
        let task: Task<Void, any Error>

        func stop() async {
            task.cancel()
            _ = await task.result
        }

        /// ``waitFor(_:_:_:)``, with the plugin's log in the failure.
        func waitFor(_ id: DeviceID, _ condition: @escaping @Sendable (HomeDevice) -> Bool) async throws {
            do {
                try await GPIOPluginTests.waitFor(home, id, condition)
            } catch {
                Issue.record("the plugin's log: \(tap.logs.joined(separator: "\n"))")
                throw error
            }
        }
    }

    static func start(_ lines: [Value], retry: String = "200ms") throws -> Running {
        let loaded = try PluginLoader.load(GPIOSimEnvironment.buildDirectory + "/libGPIOPlugin.so")
        let core = HomeCore()
        let configuration = PluginConfiguration(
            value: ["lines": .list(lines), "retry": .string(retry)], file: "hearth.yaml", keyPath: "plugins.gpio")
        try loaded.plugin.validate(configuration: configuration)
        let tap = Tap(core.context(for: "gpio", configuration: configuration))
        core.setCommandHandler(Handler(plugin: loaded.plugin, context: tap), for: "gpio")
        let task = Task { try await loaded.plugin.run(context: tap) }
        return Running(core: core, home: core.home(for: .system), tap: tap, task: task)
    }

    @Test func inputs_reachTheCore_asAttributeChangesAndSwitchEvents_withBiasAndActiveLow() async throws {
        let chip = try #require(Self.chip)
        let plugin = try Self.start([
            ["id": "door", "chip": .string(chip), "line": "GPIO0", "role": "contact", "active-low": true, "bias": "pull-up", "name": "Door", "room": "Hall"],
            ["id": "bell", "chip": .string(Self.label), "line": 1, "role": "button", "bias": "pull-down", "name": "Bell", "room": "Hall"],
        ])
        let door = DeviceID(plugin: "gpio", local: "door")
        let bell = DeviceID(plugin: "gpio", local: "bell")
        let events = plugin.home.events(device: bell, trait: SwitchTrait.identifier)
        try await waitFor(plugin.home, door) { $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(false) }
        #expect(try Self.read(0, "pull") == "pull-up", "the requested bias moved gpio-sim's pull")
        try Self.setPull(0, "pull-down")
        try await waitFor(plugin.home, door) { $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true) }
        try Self.setPull(0, "pull-up")
        try await waitFor(plugin.home, door) { $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(false) }

        try await waitFor(plugin.home, bell) { $0.value(SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(0) }
        let before = KernelTime.realtimeNanoseconds()
        try Self.setPull(1, "pull-up")
        // gpio-sim merges pull changes that come faster than the (emulated) kernel handles the
        // interrupt: release only once the press has arrived.
        try await waitFor(plugin.home, bell) { $0.value(SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(1) }
        try Self.setPull(1, "pull-down")
        let received = try await collect(events, count: 2)
        #expect(received.map(\.event) == [SwitchTrait.Event.initialPress, SwitchTrait.Event.shortRelease])
        #expect(received[0].fields["NewPosition"] == .int(1))
        #expect(received[0].timestampNanoseconds >= before - 1_000_000_000, "kernel timestamps converted to Unix time")
        #expect(received[0].timestampNanoseconds <= received[1].timestampNanoseconds)
        await plugin.stop()
    }

    @Test func outputs_commandedThroughTheCore_showInGpioSimValue() async throws {
        let chip = try #require(Self.chip)
        let plugin = try Self.start([
            ["id": "relay", "chip": .string(chip), "line": 2, "role": "relay", "active-low": true, "name": "Pump", "room": "Garden"],
            ["id": "lamp", "chip": .string("/dev/" + chip), "line": "GPIO3", "role": "light", "initial": "on", "name": "Lamp", "room": "Garden"],
        ])
        let relay = DeviceID(plugin: "gpio", local: "relay")
        let lamp = DeviceID(plugin: "gpio", local: "lamp")
        try await waitFor(plugin.home, relay) { $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) }
        #expect(try Self.read(2, "value") == "1", "off on an active-low relay board drives the line high")
        try await waitFor(plugin.home, lamp) { $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true) }
        #expect(try Self.read(3, "value") == "1")

        _ = try await plugin.home.invoke(
            CommandRequest(device: relay, deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        #expect(try Self.read(2, "value") == "0")
        try await waitFor(plugin.home, relay) { $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true) }
        _ = try await plugin.home.invoke(
            CommandRequest(device: lamp, deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle))
        #expect(try Self.read(3, "value") == "0")
        try await waitFor(plugin.home, lamp) { $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) }
        await plugin.stop()
    }

    /// Issue 18 on a real kernel: a button on gpio-sim switches a relay line through an
    /// automation (the real plugin `.so`, the real engine on the core's lossless tap).
    @Test func aButton_switchesARelay_throughAnAutomation() async throws {
        let chip = try #require(Self.chip)
        let plugin = try Self.start([
            ["id": "bell", "chip": .string(chip), "line": 6, "role": "button", "bias": "pull-down", "name": "Hall Button", "room": "Hall"],
            ["id": "relay", "chip": .string(chip), "line": 7, "role": "relay", "name": "Hall Relay", "room": "Hall"],
        ])
        let bell = DeviceID(plugin: "gpio", local: "bell")
        let relay = DeviceID(plugin: "gpio", local: "relay")
        try await plugin.waitFor(relay) { $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) }
        try await plugin.waitFor(bell) { $0.value(SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(0) }
        try await plugin.waitFor(bell) { $0.snapshot.commissioning == .commissioned }
        try await plugin.waitFor(relay) { $0.snapshot.commissioning == .commissioned }
        #expect(try Self.read(7, "value") == "0")
        let engine = AutomationEngine(core: plugin.core)
        let service = Task { await engine.run() }
        defer { service.cancel() }
        let admin = Principal(id: "user:admin", role: .admin)
        try await engine.save(
            JSONDecoder().decode(
                Automation.self,
                from: Data("""
                    {"id": "bell-relay", "name": "Bell toggles relay",
                     "starters": [{"event": {"device": "gpio:bell", "trait": "Switch", "event": "InitialPress"}}],
                     "actions": [{"command": {"device": "gpio:relay", "trait": "OnOff", "command": "Toggle"}}]}
                    """.utf8)), as: admin)
        await engine.start()
        for (press, expected) in [(1, "1"), (2, "0")] {
            try Self.setPull(6, "pull-up")
            try await withDeadline("the relay line at \(expected) after press \(press)") {
                while try Self.read(7, "value") != expected { try await Task.sleep(for: .milliseconds(10)) }
            }
            try await plugin.waitFor(bell) { $0.value(SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(1) }
            try Self.setPull(6, "pull-down")
            try await plugin.waitFor(bell) { $0.value(SwitchTrait.identifier, SwitchTrait.Attribute.currentPosition) == .int(0) }
        }
        await engine.waitForTraces { ($0["bell-relay"] ?? []).filter { $0.outcome == .completed }.count == 2 }
        let traces = try await engine.runs("bell-relay", as: admin)
        #expect(traces.allSatisfy { $0.steps.first?.result == "ok" }, "\(traces)")
        await plugin.stop()
    }

    @Test func busyLineAndMissingChip_areReportedByName_otherLinesWork_andTheBusyLineIsRetried() async throws {
        let chip = try #require(Self.chip)
        // Another holder of line 4: the kernel refuses a second request with EBUSY.
        let holder = try LibgpiodBackend().openChip(chip)
        let held = try holder.requestOutput(offset: 4, consumer: "other-owner", activeLow: false, initial: false)
        let plugin = try Self.start([
            ["id": "busy", "chip": .string(chip), "line": 4, "role": "contact", "name": "Busy", "room": "Hall"],
            ["id": "gone", "chip": "no-such-chip", "line": 0, "role": "contact", "name": "Gone", "room": "Hall"],
            ["id": "fine", "chip": .string(chip), "line": 5, "role": "leak", "name": "Leak", "room": "Hall"],
        ])
        let busy = DeviceID(plugin: "gpio", local: "busy")
        let fine = DeviceID(plugin: "gpio", local: "fine")
        try await waitFor(plugin.home, busy) { $0.snapshot.sourceConnectivity.connectivityState == .offline }
        // Lines are acquired in order: once the last one reports, the first two have been tried.
        try await waitFor(plugin.home, fine) { $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) != nil }
        let logs = plugin.tap.logs
        #expect(logs.contains { $0.contains("line 4 of GPIO chip \(chip) (\(Self.label)) is busy: held by 'other-owner'") }, "\(logs)")
        #expect(logs.contains { $0.contains("GPIO chip 'no-such-chip' not found") }, "\(logs)")
        try Self.setPull(5, "pull-up")
        try await waitFor(plugin.home, fine) { $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true) }
        held.release()
        holder.close()
        try await waitFor(plugin.home, busy) {
            $0.snapshot.sourceConnectivity.connectivityState == .online
                && $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) != nil
        }
        await plugin.stop()
    }

    @Test func aLineHeldByAnotherProcess_isLoggedWithThatProcessesNameAndPid() async throws {
        // A chip of this test's own: DoctorKernelTests runs gpiomon and gpioset on the shared
        // chip at the same time, and libgpiod 1.6's requests do not say which lines they hold.
        let sim = try SimChip(name: "plugin-busy-\(getpid())", lines: 2)
        defer { sim.remove() }
        var watch = try LineWatch(chip: sim.chip, offsets: [1])
        defer { watch.close() }
        let gpiomon = try Child("/usr/bin/gpiomon", [sim.chip, "1"])
        try watch.waitUntilRequested()
        let plugin = try Self.start([
            ["id": "held", "chip": .string(sim.chip), "line": 1, "role": "contact", "name": "Held", "room": "Hall"],
            ["id": "free", "chip": .string(sim.chip), "line": 0, "role": "contact", "name": "Free", "room": "Hall"],
        ])
        let held = DeviceID(plugin: "gpio", local: "held")
        let free = DeviceID(plugin: "gpio", local: "free")
        try await waitFor(plugin.home, held) { $0.snapshot.sourceConnectivity.connectivityState == .offline }
        // Lines are acquired in order: once the second one reports, the first has been tried.
        try await waitFor(plugin.home, free) { $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) != nil }
        let logs = plugin.tap.logs
        #expect(
            logs.contains {
                $0.contains("line 1 of GPIO chip \(sim.chip) (") && $0.contains("is busy: held by 'gpiomon' (gpiomon, pid \(gpiomon.pid))")
            }, "\(logs)")
        await gpiomon.stop()
        try await waitFor(plugin.home, held) { $0.snapshot.sourceConnectivity.connectivityState == .online }
        await plugin.stop()
    }
}

extension GPIOKernelTests {
    /// Which API `scripts/test-gpio-kernel` asked for in this pass (HEARTH_GPIO_EXPECT_API: 1 or 2).
    static var expectedAPI: Int? { ProcessInfo.processInfo.environment["HEARTH_GPIO_EXPECT_API"].flatMap { Int($0) } }

    @Test func theLibraryOfThisPass_isLoaded_andTheKernelServesIt() async throws {
        let library = GPIOLibrary.current
        #expect(library.api != nil, "\(library)")
        if let expected = Self.expectedAPI { #expect(library.api == expected, "\(library)") }
        #expect(library.description.contains("libgpiod \(library.version) (v\(library.api ?? 0) API"), "\(library)")
        let uapi = GPIOLibrary.kernelUAPI()
        #expect(uapi.v2 && uapi.serves(library), "\(uapi)")
        // The plugin .so says which library serves its chips.
        let chip = try #require(Self.chip)
        let plugin = try Self.start([["id": "probe", "chip": .string(chip), "line": 5, "role": "contact", "name": "Probe", "room": "Hall"]])
        try await plugin.tap.waitForLog("hardware backend libgpiod \(library.version) (v\(library.api ?? 0) API")
        await plugin.stop()
    }

    @Test func debounce_isTheKernels_withLibgpiod2_andInSoftware_withLibgpiod1() async throws {
        let sim = try SimChip(name: "debounce-\(getpid())", lines: 1)
        defer { sim.remove() }
        let plugin = try Self.start([["id": "leak", "chip": .string(sim.chip), "line": 0, "role": "leak", "debounce": "100ms", "name": "Leak", "room": "Hall"]])
        let leak = DeviceID(plugin: "gpio", local: "leak")
        let state = { @Sendable (d: HomeDevice) in d.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) }
        try await waitFor(plugin.home, leak) { state($0) == .bool(false) }
        // A glitch far shorter than the window, then a real change that holds.
        try sim.setPull(0, "pull-up")
        try sim.setPull(0, "pull-down")
        try sim.setPull(0, "pull-up")
        try await waitFor(plugin.home, leak) { state($0) == .bool(true) }
        let delivered = plugin.tap.counted("events")
        if GPIOLibrary.current.hasKernelDebounce {
            // The kernel debounced: it delivered the one change that held, not the glitch.
            #expect(delivered == 1, "hearth_gpio_events_total counts what the kernel delivered: \(delivered)")
        } else {
            #expect(delivered >= 1, "software debounce sees every edge the kernel delivers")
        }
        try sim.setPull(0, "pull-down")
        try await waitFor(plugin.home, leak) { state($0) == .bool(false) }
        await plugin.stop()
    }

    @Test
    func aChipRemovedAndAddedAgain_takesItsDevicesOffline_andBackOnline() async throws {
        let label = "hearth-gone-\(getpid())"
        let sim = try SimChip(name: label, lines: 2, label: label)
        defer { sim.remove() }
        let plugin = try Self.start([
            ["id": "door", "chip": .string(label), "line": 0, "role": "contact", "name": "Door", "room": "Hall"],
            ["id": "pump", "chip": .string(label), "line": 1, "role": "relay", "name": "Pump", "room": "Hall"],
        ])
        let door = DeviceID(plugin: "gpio", local: "door")
        let pump = DeviceID(plugin: "gpio", local: "pump")
        let online = { @Sendable (d: HomeDevice) in d.snapshot.sourceConnectivity.connectivityState == .online }
        try await plugin.waitFor(door) { online($0) && $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(false) }
        // Published devices start online: wait until the relay's line is really requested.
        try await plugin.waitFor(pump) { online($0) && $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) }
        // Twice: the first removal must leave nothing behind (a watch, a held line, a kernel lock
        // taken by an oopsed thread) that keeps the second from working.
        for cycle in 1...2 {
            let chipName = sim.currentChip
            try sim.setLive(false)
            try await plugin.waitFor(door) { $0.snapshot.sourceConnectivity.connectivityState == .offline }
            try await plugin.waitFor(pump) { $0.snapshot.sourceConnectivity.connectivityState == .offline }
            let logs = plugin.tap.logs
            #expect(logs.contains { $0.contains("GPIO chip '\(label)' (\(chipName), \(label)) is gone") }, "cycle \(cycle): \(logs)")
            #expect(logs.filter { $0.contains("GPIO device 'door': GPIO chip '\(label)'") && $0.contains("is gone") }.count == cycle, "cycle \(cycle): \(logs)")
            try sim.setLive(true)
            // Re-acquired: a returning gpio-sim chip's lines are pulled down, the relay starts off.
            try await plugin.waitFor(door) { online($0) && $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(false) }
            try await plugin.waitFor(pump) { online($0) && $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false) }
            try sim.setPull(0, "pull-up")
            try await plugin.waitFor(door) { $0.value(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true) }
            _ = try await plugin.home.invoke(
                CommandRequest(device: pump, deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
            try await plugin.waitFor(pump) { $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true) }
            #expect(try sim.read(1, "value") == "1", "cycle \(cycle): the re-acquired relay drives the returned chip's line")
        }
        await plugin.stop()
    }

    @Test func linesClaimedAndReleasedByGpiosetWhileRunning_areNoticed_logged_andTakenAtOnce() async throws {
        let sim = try SimChip(name: "claim-\(getpid())", lines: 3)
        defer { sim.remove() }
        var lampWatch = try LineWatch(chip: sim.chip, offsets: [1])
        defer { lampWatch.close() }
        let gpiomon = try Child("/usr/bin/gpiomon", [sim.chip, "1"])
        try lampWatch.waitUntilRequested()
        // Retried only every ten minutes: what happens sooner is the line-info watch's doing.
        let plugin = try Self.start([["id": "lamp", "chip": .string(sim.chip), "line": 1, "status-line": 2, "role": "light", "name": "Lamp", "room": "Hall"]], retry: "600s")
        let lamp = DeviceID(plugin: "gpio", local: "lamp")
        try await waitFor(plugin.home, lamp) { $0.snapshot.sourceConnectivity.connectivityState == .offline }
        try await plugin.tap.waitForLog("line 1 of GPIO chip \(sim.chip) (")
        // While hearthd runs, gpioset claims the lamp's status line.
        var statusWatch = try LineWatch(chip: sim.chip, offsets: [2])
        defer { statusWatch.close() }
        let gpioset = try Child("/usr/bin/gpioset", ["--mode=signal", sim.chip, "2=1"])
        try statusWatch.waitUntilRequested()
        try await plugin.tap.waitForLog("line 2 of GPIO chip \(sim.chip) was requested by 'gpioset' (gpioset, pid \(gpioset.pid))")
        await gpiomon.stop()
        try await plugin.tap.waitForLog("line 1 of GPIO chip \(sim.chip) was released by 'gpiomon'; requesting it for 'lamp' now")
        try await plugin.tap.waitForLog("line 2 of GPIO chip \(sim.chip) (")
        #expect(plugin.tap.logs.contains { $0.contains("line 2 of GPIO chip \(sim.chip) (") && $0.contains("is busy: held by 'gpioset'") }, "\(plugin.tap.logs)")
        await gpioset.stop()
        // Noticed and logged. "; requesting it for 'lamp' now" follows when the lamp's busy refusal
        // was recorded before the release arrived; when the release races the plugin's own request
        // (seen in the VM), that request takes the line instead. Either way it is taken at once:
        // the next retry is ten minutes away, and the lamp is online within the deadline below.
        try await plugin.tap.waitForLog("line 2 of GPIO chip \(sim.chip) was released by 'gpioset'")
        try await waitFor(plugin.home, lamp) {
            $0.snapshot.sourceConnectivity.connectivityState == .online && $0.value(OnOffTrait.identifier, OnOffTrait.Attribute.onOff) != nil
        }
        await plugin.stop()
    }
}

// MARK: - Helpers

/// What `with-gpio-sim` tells the command it runs, and where the plugin `.so` was built.
enum GPIOSimEnvironment {
    static var chip: String? { ProcessInfo.processInfo.environment["GPIO_SIM_CHIP"] }
    static var sysfs: String { ProcessInfo.processInfo.environment["GPIO_SIM_SYSFS"] ?? "" }
    static var label: String { ProcessInfo.processInfo.environment["GPIO_SIM_LABEL"] ?? "gpio-sim-test" }

    /// The directory `swift build` put the test binary and the plugin `.so` files in.
    static var buildDirectory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/", !FileManager.default.fileExists(atPath: dir.appendingPathComponent("libGPIOPlugin.so").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }
}

extension HomeDevice {
    func value(_ trait: TraitID, _ attribute: AttributeID) -> Value? {
        snapshot.primaryType?.traits[trait]?.attributes[attribute]
    }
}

/// Fails instead of hanging when the awaited never comes.
func withDeadline<T: Sendable>(_ what: String, _ timeout: Duration = .seconds(60), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            Issue.record("timed out after \(timeout) waiting for \(what)")
            throw CancellationError()
        }
        return value
    }
}

/// Waits until the device exists and `condition` holds for it.
func waitFor(_ home: Home, _ id: DeviceID, _ condition: @escaping @Sendable (HomeDevice) -> Bool) async throws {
    _ = try await withDeadline("device \(id)") {
        for await set in home.devices().batched() where set[id: id] != nil { break }
        for await device in home.device(id: id) where condition(device) { return true }
        return false
    }
}

/// The next `count` events.
func collect(_ events: Updates<DeviceEvent>, count: Int) async throws -> [DeviceEvent] {
    try await withDeadline("\(count) events") {
        var got: [DeviceEvent] = []
        for await e in events {
            got.append(e)
            if got.count == count { break }
        }
        return got
    }
}

/// The core's context, with the plugin's log lines and counters kept for assertions.
final class Tap: DriverContext {
    struct Kept {
        var lines: [String] = []
        var counts: [String: Int] = [:]
    }

    let inner: any DriverContext
    let kept = Mutex(Kept())

    init(_ inner: any DriverContext) { self.inner = inner }

    var logs: [String] { kept.withLock { $0.lines } }
    func counted(_ name: String) -> Int { kept.withLock { $0.counts[name] ?? 0 } }

    /// Waits until a log line contains `text` (at most 60 s; the log is looked at every 20 ms).
    func waitForLog(_ text: String) async throws {
        _ = try await withDeadline("a log line containing '\(text)'") {
            while !self.logs.contains(where: { $0.contains(text) }) { try await Task.sleep(for: .milliseconds(20)) }
            return true
        }
    }

    var pluginID: String { inner.pluginID }
    var configuration: PluginConfiguration { inner.configuration }
    func publish(_ device: DeviceDescription) { inner.publish(device) }
    func remove(device localID: String) { inner.remove(device: localID) }
    func report(_ reports: [AttributeReport]) { inner.report(reports) }
    func emit(_ event: EventReport) { inner.emit(event) }
    func setConnectivity(_ state: ConnectivityState, device localID: String?) { inner.setConnectivity(state, device: localID) }
    func log(_ level: LogLevel, _ message: String, device localID: String?) {
        kept.withLock { $0.lines.append("\(level): \(message)") }
        inner.log(level, message, device: localID)
    }
    func count(_ name: String, by amount: Int) {
        kept.withLock { $0.counts[name, default: 0] += amount }
        inner.count(name, by: amount)
    }
}

/// Routes the core's commands to the plugin, as the plugin host does.
struct Handler: CommandHandler {
    let plugin: any DriverPlugin
    let context: any DriverContext
    func handle(_ command: DriverCommand) async throws -> Value { try await plugin.handle(command, context: context) }
    func write(_ write: DriverWrite) async throws { try await plugin.write(write, context: context) }
}
