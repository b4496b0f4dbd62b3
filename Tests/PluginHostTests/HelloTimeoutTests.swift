import DriverAPI
import DriverTesting
import Foundation
import HomeCore
import HomeModel
import PluginHost
import Testing

/// A plugin process must say `hello` within its `helloTimeout` (on the injected clock): one
/// that never does is killed and restarted like a crash; one that does is left alone.
@Suite struct HelloTimeoutTests {
    /// A real program plugin that starts and never speaks: `exec sleep 600`.
    @Test func silentProgram_isKilledAfterTheTimeout_restartedWithBackoff_thenParked() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let script = try dir.write("silent.sh", "#!/bin/sh\nexec sleep 600\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)

        let core = HomeCore()
        let clock = ManualClock()
        let manifest = PluginManifest(id: "silent", name: "silent", version: "")
        let plugin = IsolatedPlugin(
            manifest: manifest, launch: .program(script, environment: childEnvironment), helloTimeout: .seconds(2), clock: clock)
        let service = PluginService(
            LoadedPlugin(path: script, manifest: manifest, plugin: plugin), core: core, configuration: section("silent", [:]),
            policy: RestartPolicy(initial: .seconds(1), maximum: .seconds(60), parkAfter: 2), clock: clock, logger: testLogger)

        try await withServices([service]) {
            let started = await service.waitForStatus { $0.state == .running && $0.processID != nil }
            let first = try #require(started?.processID)
            // Only the hello watchdog sleeps on the clock; until it fires the process lives.
            await clock.waitForSleepers(1)
            #expect(processExists(first))
            clock.advance(by: .seconds(2))

            let restarting = await service.waitForStatus { $0.state == .restarting }
            #expect(restarting?.lastError == "plugin process \(script) (pid \(first)) sent no hello within 2 s; killed")
            #expect(restarting?.restarts == 1)
            #expect(restarting?.restartDelaySeconds == 1)
            #expect(restarting?.processID == nil)
            #expect(!processExists(first))  // killed and reaped

            // The backoff is the only sleeper now; after it a new process starts, and is timed out again.
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(1))
            let again = await service.waitForStatus { $0.state == .running && $0.processID != nil && $0.processID != first }
            let second = try #require(again?.processID)
            await clock.waitForSleepers(1)
            #expect(processExists(second))
            clock.advance(by: .seconds(2))

            // Two failures in a row: parked, with the reason.
            let parked = await service.waitForStatus { $0.state == .parked }
            #expect(parked?.lastError == "plugin process \(script) (pid \(second)) sent no hello within 2 s; killed")
            #expect(!processExists(second))
        }
        #expect(service.currentStatus.state == .parked)
    }

    /// The fixture `.so` in `hearthd plugin-host` says hello at once: the watchdog stops waiting,
    /// and time passing beyond the timeout changes nothing.
    @Test func wellBehavedIsolatedPlugin_isUnaffected() async throws {
        let core = HomeCore()
        let clock = ManualClock()
        let path = fixture("FlakyPlugin")
        let manifest = PluginManifest(id: "flaky", name: "flaky", version: "")
        let plugin = IsolatedPlugin(
            manifest: manifest, launch: .pluginHost(hearthd: hearthd, plugin: path, environment: childEnvironment),
            helloTimeout: .seconds(2), clock: clock)
        let service = PluginService(
            LoadedPlugin(path: path, manifest: manifest, plugin: plugin), core: core, configuration: section("flaky", ["failures": 0]),
            clock: clock, logger: testLogger)
        let lamp = DeviceID(plugin: "flaky", local: "lamp")
        try await withServices([service]) {
            await waitForDevice(core, lamp) { connectivity($0) == .online }
            let pid = try #require(service.currentStatus.processID)
            // Its hello cancelled the watchdog before the device was published.
            #expect(clock.sleeperCount == 0)
            clock.advance(by: .seconds(60))
            _ = try await core.home(for: .system).invoke(lampCommand("flaky", OnOffTrait.Command.on))
            await waitForDevice(core, lamp) { $0.types.first?.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff] == true }
            #expect(service.currentStatus.state == .running)
            #expect(service.currentStatus.processID == pid)
            #expect(processExists(pid))
        }
        #expect(service.currentStatus.restarts == 0)
        #expect(service.currentStatus.lastError == nil)
        #expect(service.currentStatus.state == .stopped)
    }

    /// `plugins.<id>.helloTimeout` reaches the plugin; the default is 30 s; a bad value is refused by line.
    @Test func helloTimeout_isAHostOption_readFromTheSection() throws {
        let (options, rest) = try PluginHostOptions.split(
            section("weather", ["executable": "/usr/bin/weather", "helloTimeout": 2.5, "city": "Oslo"], lines: ["helloTimeout": 4]))
        #expect(options.helloTimeout == .milliseconds(2500))
        #expect(rest.value == ["city": "Oslo"])
        #expect(rest.lines.isEmpty)
        #expect(try PluginHostOptions.split(section("weather", ["executable": "/usr/bin/weather"])).0.helloTimeout == nil)
        for bad: Value in [0, -1, "soon"] {
            #expect(throws: HomeError.invalidArgument("hearth.yaml:4: plugins.weather.helloTimeout: expected a number of seconds, more than 0 and at most 86400")) {
                try PluginHostOptions.split(section("weather", ["helloTimeout": bad], lines: ["helloTimeout": 4]))
            }
        }

        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let script = try dir.write("silent.sh", "#!/bin/sh\nexec sleep 600\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        let plan = PluginSetup.plan(
            directories: [],
            sections: [
                "quick": section("quick", ["executable": .string(script), "helloTimeout": 5]),
                "usual": section("usual", ["executable": .string(script)]),
            ],
            core: HomeCore(), clock: ContinuousClock(), hearthd: hearthd, logger: testLogger)
        let timeouts = plan.services.map { ($0.loaded.manifest.id, ($0.loaded.plugin as? IsolatedPlugin)?.helloTimeout) }
        #expect(timeouts.map(\.0) == ["quick", "usual"])
        #expect(timeouts.map(\.1) == [.seconds(5), .seconds(30)])
    }
}
