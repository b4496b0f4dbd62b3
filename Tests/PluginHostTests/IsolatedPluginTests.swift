import DriverAPI
import DriverTesting
import Foundation
import HomeCore
import HomeModel
import PluginHost
import Testing

/// Isolated mode with real child processes: `hearthd plugin-host` loading the fixture `.so`.
@Suite struct IsolatedPluginTests {
    func isolated(_ fixtureName: String, id: String, config: Value, core: HomeCore, clock: ManualClock, policy: RestartPolicy = RestartPolicy())
        -> PluginService<ManualClock>
    {
        let path = fixture(fixtureName)
        let manifest = PluginManifest(id: id, name: id, version: "")
        let plugin = IsolatedPlugin(manifest: manifest, launch: .pluginHost(hearthd: hearthd, plugin: path, environment: childEnvironment))
        return PluginService(
            LoadedPlugin(path: path, manifest: manifest, plugin: plugin), core: core, configuration: section(id, config), policy: policy,
            clock: clock, logger: testLogger)
    }

    enum Crash: String, CaseIterable, Sendable { case fatalError, segfault }

    @Test(arguments: Crash.allCases)
    func crashingPlugin_takesDownOnlyItsChild_isRestarted_othersKeepServing(_ crash: Crash) async throws {
        let core = HomeCore()
        let clock = ManualClock()
        let crashy = isolated("CrashingPlugin", id: "crashy", config: ["mode": .string(crash.rawValue)], core: core, clock: clock)
        let other = isolated("FlakyPlugin", id: "flaky", config: ["failures": 0], core: core, clock: clock)
        let home = core.home(for: .system)
        let crashyLamp = DeviceID(plugin: "crashy", local: "lamp")
        let otherLamp = DeviceID(plugin: "flaky", local: "lamp")
        try await withServices([other, crashy]) {
            await waitForDevice(core, crashyLamp) { connectivity($0) == .online }
            await waitForDevice(core, otherLamp) { connectivity($0) == .online }
            let first = try #require(crashy.currentStatus.processID)
            #expect(crashy.currentStatus.isolated)
            #expect(crashy.currentStatus.name == "Crashy")  // from the child's hello

            // `toggle` crashes the child; the command fails instead of hanging.
            await #expect(throws: HomeError.self) { try await home.invoke(lampCommand("crashy", OnOffTrait.Command.toggle)) }
            let restarting = await crashy.waitForStatus { $0.state == .restarting }
            let why = restarting?.lastError ?? ""
            #expect(why.hasPrefix("the plugin process crashed with signal"), "\(why)")
            // fatalError traps: SIGILL on x86_64, SIGTRAP on arm64.
            let expected = crash == .segfault ? ["SIGSEGV"] : ["SIGILL", "SIGTRAP"]
            #expect(expected.contains { why.contains($0) }, "\(why)")
            await waitForDevice(core, crashyLamp) { connectivity($0) == .offline }
            #expect(!processExists(first))

            // The host and the other plugin keep serving meanwhile.
            _ = try await home.invoke(lampCommand("flaky", OnOffTrait.Command.on))
            await waitForDevice(core, otherLamp) { $0.types.first?.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff] == true }
            // A command to the restarting plugin is refused at once.
            await #expect(throws: HomeError.self) { try await home.invoke(lampCommand("crashy", OnOffTrait.Command.on)) }

            // After the backoff a new child runs and the lamp is online again.
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(1))
            let second = await crashy.waitForStatus { $0.state == .running && $0.processID != nil && $0.processID != first }
            #expect(second?.name == "Crashy")
            await waitForDevice(core, crashyLamp) { connectivity($0) == .online }
            _ = try await home.invoke(lampCommand("crashy", OnOffTrait.Command.on))
            await waitForDevice(core, crashyLamp) { $0.types.first?.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff] == true }
        }
        #expect(crashy.currentStatus.restarts == 1)
        #expect(other.currentStatus.restarts == 0)
    }

    @Test func throwingIsolatedPlugin_isRestartedWithBackoff_likeInProcess() async throws {
        let core = HomeCore()
        let clock = ManualClock()
        let policy = RestartPolicy(initial: .seconds(2), maximum: .seconds(60), parkAfter: 5)
        let flaky = isolated("FlakyPlugin", id: "flaky", config: ["failures": 1], core: core, clock: clock, policy: policy)
        try await withServices([flaky]) {
            let s = await flaky.waitForStatus { $0.state == .restarting }
            #expect(s?.lastError == "planned failure 1 of 1")
            #expect(s?.restartDelaySeconds == 2)
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(2))
            // A new process: its run count starts again at 1, and fails again.
            let again = await flaky.waitForStatus { $0.state == .restarting && $0.restarts == 2 }
            #expect(again?.restartDelaySeconds == 4)
        }
    }

    @Test func shutdownStopsTheChildProcess() async throws {
        let core = HomeCore()
        let service = isolated("FlakyPlugin", id: "flaky", config: ["failures": 0], core: core, clock: ManualClock())
        let pid: Int32 = try await withServices([service]) {
            await waitForDevice(core, DeviceID(plugin: "flaky", local: "lamp")) { connectivity($0) == .online }
            return try #require(service.currentStatus.processID)
        }
        #expect(!processExists(pid))
        #expect(service.currentStatus.state == .stopped)
        #expect(service.currentStatus.restarts == 0)
    }
}
