import DriverAPI
import Foundation
import HomeCore
import HomeModel
import PluginHost
import DriverTesting
import ServiceLifecycle
import Testing

/// A plugin that is not Swift: `Tests/Fixtures/python-plugin/plugin.py` speaks the protocol of
/// `docs/plugin-protocol.md`, configured as `plugins.pylamp.executable`.
@Suite struct ForeignPluginTests {
    static let script = repositoryRoot + "/Tests/Fixtures/python-plugin/plugin.py"

    static var python3: String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return path.map { "\($0)/python3" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var hasPython: Bool {
        if python3 == nil { print("ForeignPluginTests skipped: python3 is not installed on this machine") }
        return python3 != nil
    }

    @Test(.enabled(if: hasPython, "python3 is not installed"))
    func pythonPlugin_publishesReportsAndObeysCommands_throughTheHost() async throws {
        let core = HomeCore()
        let plan = PluginSetup.plan(
            directories: [], sections: ["pylamp": section("pylamp", ["executable": .string(Self.script), "name": "Desk Lamp"])],
            core: core, clock: ContinuousClock(), hearthd: hearthd, logger: testLogger)
        let service = try #require(plan.services.first)
        #expect(service.loaded.path == Self.script)
        let lamp = DeviceID(plugin: "pylamp", local: "lamp")
        try await withServices(plan.services) {
            let device = await waitForDevice(core, lamp) { connectivity($0) == .online }
            #expect(device?.name == "Desk Lamp")  // from its configuration
            #expect(plan.registry.status(of: "pylamp")?.name == "Python lamp")  // from its hello
            #expect(plan.registry.status(of: "pylamp")?.isolated == true)

            let home = core.home(for: .system)
            _ = try await home.invoke(lampCommand("pylamp", OnOffTrait.Command.toggle))
            let on = await waitForDevice(core, lamp) { $0.types.first?.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff] == true }
            #expect(on != nil)
            // Its errors come back with their code.
            await #expect(throws: HomeError.unsupportedOperation("the python lamp supports on, off and toggle")) {
                try await home.invoke(
                    CommandRequest(
                        device: lamp, deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier,
                        command: OnOffTrait.Command.offWithEffect, arguments: ["EffectIdentifier": 0, "EffectVariant": 0]))
            }
        }
        #expect(service.currentStatus.state == .stopped)
    }

    @Test(.enabled(if: hasPython, "python3 is not installed"))
    func pythonPlugin_refusingItsConfiguration_isReportedByLine() async throws {
        let core = HomeCore()
        let plan = PluginSetup.plan(
            directories: [],
            sections: ["pylamp": section("pylamp", ["executable": .string(Self.script), "name": 42], lines: ["name": 9])],
            core: core, clock: ContinuousClock(), hearthd: hearthd, logger: testLogger)
        let service = try #require(plan.services.first)
        try await withServices(plan.services) {
            let s = await service.waitForStatus { $0.state == .invalidConfiguration }
            #expect(s?.lastError == "hearth.yaml:9: plugins.pylamp.name: expected a string")
        }
    }

    @Test func missingProgram_isRefusedByLine_withoutStartingAnything() throws {
        let plan = PluginSetup.plan(
            directories: [], sections: ["ghost": section("ghost", ["executable": "/nonexistent/ghost"], lines: ["executable": 12])],
            core: HomeCore(), clock: ContinuousClock(), hearthd: hearthd, logger: testLogger)
        #expect(plan.services.isEmpty)
        let s = try #require(plan.registry.status(of: "ghost"))
        #expect(s.state == .refused)
        #expect(s.lastError == "hearth.yaml:12: plugins.ghost.executable: /nonexistent/ghost is missing or not executable")
    }
}

/// Shutdown has a deadline: a plugin process that ignores `stop` is killed when its grace
/// period (on the injected clock) is over, and the daemon's shutdown completes.
@Suite struct StopGraceTests {
    @Test(.enabled(if: ForeignPluginTests.hasPython, "python3 is not installed"))
    func childIgnoringStop_isKilledAfterGrace_andShutdownCompletes() async throws {
        let core = HomeCore()
        let clock = ManualClock()
        let manifest = PluginManifest(id: "pylamp", name: "pylamp", version: "")
        let plugin = IsolatedPlugin(manifest: manifest, launch: .program(ForeignPluginTests.script), stopGrace: .seconds(5), clock: clock)
        let service = PluginService(
            LoadedPlugin(path: ForeignPluginTests.script, manifest: manifest, plugin: plugin), core: core,
            configuration: section("pylamp", ["ignoreStop": true]), clock: clock, logger: testLogger)
        let group = ServiceGroup(services: [service], logger: testLogger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await waitForDevice(core, DeviceID(plugin: "pylamp", local: "lamp")) { connectivity($0) == .online }
            let pid = try #require(service.currentStatus.processID)
            await group.triggerGracefulShutdown()
            // The host said stop and waits for the grace period; the child is still there.
            await clock.waitForSleepers(1)
            #expect(processExists(pid))
            clock.advance(by: .seconds(5))
            try await tasks.waitForAll()
            #expect(!processExists(pid))
        }
        #expect(service.currentStatus.state == .stopped)
    }
}
