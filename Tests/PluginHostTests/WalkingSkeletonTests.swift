import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import PluginHost
import ServiceLifecycle
import Testing

/// The folder the build put the plugin `.so` files in: beside the test binary.
enum BuildProducts {
    static var directory: String {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // The test bundle is `…/debug/HearthPackageTests.xctest` (a file on Linux).
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.path
    }

    static func path(_ library: String) -> String { (directory as NSString).appendingPathComponent("lib\(library).so") }
}

@Suite struct WalkingSkeletonTests {
    @Test func loadsTheDemoPluginFromItsSharedObject() throws {
        let loaded = try PluginLoader.load(BuildProducts.path("DemoPlugin"))
        #expect(loaded.manifest.id == "demo")
    }

    @Test func refusesAPluginBuiltForAnotherABI() {
        let path = BuildProducts.path("WrongABIPlugin")
        do {
            _ = try PluginLoader.load(path)
            Issue.record("expected the wrong-ABI plugin to be refused")
        } catch {
            #expect(error.reason == .abiMismatch)
            #expect(error.path == path)
            #expect(error.message.contains("ABI \(HearthPluginABI.version + 1000)"))
        }
    }

    @Test func refusesAFileThatIsNotAPlugin() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = dir.appendingPathComponent("libNotAPlugin.so").path
        try Data("hello".utf8).write(to: URL(fileURLWithPath: text))
        #expect(throws: PluginLoadError.self) { try PluginLoader.load(text) }
        do { _ = try PluginLoader.load(text) } catch { #expect(error.reason == .notELF) }

        // A real shared object that exports none of the entry points.
        do {
            _ = try PluginLoader.load(BuildProducts.path("PluginKit"))
            Issue.record("expected libPluginKit.so to be refused")
        } catch {
            #expect(error.reason == .missingSymbol)
            #expect(error.message.contains("hearth_plugin_abi_version"))
        }
    }

    @Test func loadAllKeepsGoodPluginsAndNamesTheRefusedOnes() throws {
        // The build folder holds the test fixtures too; a daemon's scan passes them by.
        let (loaded, rejected) = PluginLoader.loadAll(from: [BuildProducts.directory], includeTestFixtures: true)
        #expect(loaded.contains { $0.manifest.id == "demo" })
        #expect(rejected.contains { $0.path.hasSuffix("libWrongABIPlugin.so") && $0.reason == .abiMismatch })
    }

    /// Demo `.so` → PluginService → core → an in-process observer; a command goes back to the
    /// plugin and its state report comes back.
    @Test func stateChangeAndCommandRoundTripThroughTheCore() async throws {
        let loaded = try PluginLoader.load(BuildProducts.path("DemoPlugin"))
        let core = HomeCore()
        let config = PluginConfiguration(value: ["interval": 0.05, "room": "Living Room"], file: "test.yaml", keyPath: "plugins.demo")
        let service = PluginService(loaded, core: core, configuration: config, clock: ContinuousClock(), logger: Logger(label: "test"))
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let home = core.home(for: .system)

            // The thermometer appears and its reading changes (the demo drifts it).
            var thermo: Updates<HomeDevice>.AsyncIterator?
            for await set in home.devices().batched() where set[id: "demo:thermometer"] != nil && set[id: "demo:lamp"] != nil {
                thermo = home.device(id: "demo:thermometer").makeAsyncIterator()
                break
            }
            let first = try #require(await thermo?.next())
            let firstValue = await first.types.get(TemperatureSensorDeviceType.self)?.matterTraits.temperatureMeasurementTrait?.attributes.measuredValue
            let next = try #require(await thermo?.next())
            let nextValue = await next.types.get(TemperatureSensorDeviceType.self)?.matterTraits.temperatureMeasurementTrait?.attributes.measuredValue
            #expect(firstValue != nil && nextValue != nil && firstValue != nextValue)
            #expect(try await home.rooms().list().map(\.name) == ["Living Room"])

            // Command round trip: toggle the lamp; the new state arrives as the plugin's report.
            let lamp = try home.currentDevice(id: "demo:lamp")
            var lampUpdates = home.device(id: "demo:lamp").makeAsyncIterator()
            _ = await lampUpdates.next()
            let light = try #require(await lamp.types.get(OnOffLightDeviceType.self))
            #expect(light.matterTraits.onOffTrait?.attributes.onOff == false)
            try await #require(light.matterTraits.onOffTrait).toggle()
            let toggled = try #require(await lampUpdates.next())
            #expect(await toggled.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff == true)

            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(service.currentStatus.state == .stopped)
    }
}
