import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import PluginHost
import ServiceLifecycle
import Testing

/// The build folder: the test binary sits in it, beside `hearthd` and the fixture plugins.
let buildDirectory: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: exe)
    // On Linux the test binary is `<build>/HearthPackageTests.xctest`; step out of a bundle if any.
    while url.path != "/" && !FileManager.default.fileExists(atPath: url.deletingLastPathComponent().appendingPathComponent("hearthd").path) {
        url = url.deletingLastPathComponent()
    }
    return url.deletingLastPathComponent().path
}()

/// The repository's root (for `Tests/Fixtures`, `templates/`).
let repositoryRoot: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

let hearthd = buildDirectory + "/hearthd"

/// The path of a fixture plugin's `.so` in the build folder.
func fixture(_ name: String) -> String { "\(buildDirectory)/lib\(name).so" }

/// A fresh temporary folder, removed by `cleanUp()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "hearth-host-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Copies fixture plugins in (a copy, so each folder holds exactly the files a test names).
    func add(fixtures names: [String]) throws {
        for name in names {
            let source = fixture(name)
            try #require(FileManager.default.fileExists(atPath: source), "fixture \(source) is not built; run swift build --build-tests")
            try FileManager.default.copyItem(atPath: source, toPath: "\(path)/lib\(name).so")
        }
    }

    func write(_ name: String, _ text: String) throws -> String {
        let file = "\(path)/\(name)"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: path) }
}

/// Quiet by default; `HEARTH_TEST_LOG=debug` shows what the host logs.
let testLogger: Logger = {
    var logger = Logger(label: "hearth.test")
    logger.logLevel = ProcessInfo.processInfo.environment["HEARTH_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    return logger
}()

/// The child's environment in tests: no crash backtraces (they take seconds to symbolicate).
let childEnvironment = ["SWIFT_BACKTRACE": "enable=no"]

/// A configuration section as `hearthd` would make it from `hearth.yaml`.
func section(_ id: String, _ value: Value, lines: [String: Int] = [:]) -> PluginConfiguration {
    PluginConfiguration(value: value, file: "hearth.yaml", keyPath: "plugins.\(id)", lines: lines)
}

extension PluginService {
    /// Waits until the status satisfies `condition`, and returns it.
    @discardableResult
    func waitForStatus(_ condition: @Sendable (PluginStatus) -> Bool) async -> PluginStatus? {
        for await s in statusUpdates() where condition(s) { return s }
        return nil
    }
}

/// Waits until device `id` exists and satisfies `condition` (any device the system principal sees).
@discardableResult
func waitForDevice(_ core: HomeCore, _ id: DeviceID, _ condition: @Sendable (DeviceSnapshot) -> Bool) async -> DeviceSnapshot? {
    for await set in core.home(for: .system).discoveredDevices().batched() {
        if let d = set[id: id]?.snapshot, condition(d) { return d }
    }
    return nil
}

func connectivity(_ d: DeviceSnapshot) -> ConnectivityState { d.sourceConnectivity.connectivityState }

/// Runs services in a `ServiceGroup` around `body`, then shuts the group down gracefully.
func withServices<T: Sendable>(
    _ services: [any Service], _ body: @Sendable () async throws -> T
) async throws -> T {
    let group = ServiceGroup(services: services, logger: testLogger)
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return try result.get()
    }
}

func lampCommand(_ plugin: String, _ command: CommandID) -> CommandRequest {
    CommandRequest(
        device: DeviceID(plugin: plugin, local: "lamp"), deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier,
        command: command)
}

/// Whether a process still exists.
func processExists(_ pid: Int32) -> Bool { kill(pid, 0) == 0 }
