// Prints what isolated mode costs: command round trips (command → plugin → report → result)
// through the core to the same plugin, in-process and in a child process.
//
//   swift build -c release && .build/release/hearth-plugin-bench [rounds]
//
// Uses the FlakyPlugin fixture and hearthd from the same build folder. Loopback only (a Unix
// socket pair); no network.
import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import PluginHost
import ServiceLifecycle

let rounds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 5000
let folder = URL(fileURLWithPath: ChildLaunch.currentExecutable).deletingLastPathComponent().path
let so = folder + "/libFlakyPlugin.so"
let hearthd = folder + "/hearthd"
let logger: Logger = {
    var l = Logger(label: "bench")
    l.logLevel = .critical
    return l
}()

func measure(isolated: Bool) async throws -> Duration {
    let core = HomeCore(logger: logger)
    var loaded = try PluginLoader.load(so)
    if isolated {
        loaded = LoadedPlugin(
            path: so, manifest: loaded.manifest,
            plugin: IsolatedPlugin(manifest: loaded.manifest, launch: .pluginHost(hearthd: hearthd, plugin: so)))
    }
    let service = PluginService(
        loaded, core: core, configuration: PluginConfiguration(value: ["failures": 0]), clock: ContinuousClock(), logger: logger)
    let group = ServiceGroup(services: [service], logger: logger)
    let home = core.home(for: .system)
    let lamp = DeviceID(plugin: "flaky", local: "lamp")
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        // Wait until the lamp is there.
        for await set in home.discoveredDevices().batched() where set[id: lamp] != nil { break }
        let request = { (on: Bool) in
            CommandRequest(
                device: lamp, deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier,
                command: on ? OnOffTrait.Command.on : OnOffTrait.Command.off)
        }
        for i in 0..<200 { _ = try await home.invoke(request(i % 2 == 0)) }  // warm up
        let start = ContinuousClock.now
        for i in 0..<rounds { _ = try await home.invoke(request(i % 2 == 0)) }
        let elapsed = ContinuousClock.now - start
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return elapsed
    }
}

func micros(_ d: Duration) -> Double { Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12 }

let inProcess = try await measure(isolated: false)
let isolated = try await measure(isolated: true)
let a = micros(inProcess) / Double(rounds)
let b = micros(isolated) / Double(rounds)
print("command round trips: \(rounds) sequential, FlakyPlugin (each command reports, then answers)")
print(String(format: "  in-process: %8.1f µs/command  %9.0f commands/s", a, 1e6 / a))
print(String(format: "  isolated:   %8.1f µs/command  %9.0f commands/s", b, 1e6 / b))
print(String(format: "  isolated / in-process: %.1f×", b / a))
