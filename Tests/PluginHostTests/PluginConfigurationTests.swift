import DriverAPI
import Foundation
import HomeCore
import HomeModel
import PluginHost
import Testing

/// A plugin's section is checked against its declared schema (`configurationType`) and its
/// `validate` before it starts; errors name the file, line and key path; the others still run.
@Suite struct PluginConfigurationTests {
    let lines = ["": 5, "failures": 6]

    func service(_ config: Value, isolated: Bool, core: HomeCore) throws -> PluginService<ContinuousClock> {
        let path = fixture("FlakyPlugin")
        var loaded = try PluginLoader.load(path)
        if isolated {
            loaded = LoadedPlugin(
                path: path, manifest: loaded.manifest,
                plugin: IsolatedPlugin(manifest: loaded.manifest, launch: .pluginHost(hearthd: hearthd, plugin: path, environment: childEnvironment)))
        }
        return PluginService(
            loaded, core: core, configuration: section("flaky", config, lines: lines), clock: ContinuousClock(), logger: testLogger)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let config: Value
        let message: String
        var testDescription: String { message }
    }

    static let cases = [
        Case(config: ["failures": "many"], message: "hearth.yaml:6: plugins.flaky.failures: expected an integer"),
        Case(config: ["device": "lamp"], message: "hearth.yaml:5: plugins.flaky: missing required key 'failures'"),
        Case(config: ["failures": -1], message: "hearth.yaml:6: plugins.flaky.failures: must be 0 or more"),
    ]

    @Test(arguments: cases, [false, true])
    func refusesBadSection_byKeyPathAndLine_othersStillRun(_ c: Case, isolated: Bool) async throws {
        let core = HomeCore()
        let bad = try service(c.config, isolated: isolated, core: core)
        let crashy = try PluginLoader.load(fixture("CrashingPlugin"))
        let good = PluginService(
            crashy, core: core, configuration: section("crashy", ["mode": "segfault"]), clock: ContinuousClock(), logger: testLogger)
        try await withServices([good, bad]) {
            let s = await bad.waitForStatus { $0.state == .invalidConfiguration }
            #expect(s?.lastError?.hasPrefix(c.message) == true, "\(s?.lastError ?? "")")
            #expect(s?.isFailed == true)
            #expect(s?.restarts == 0)
            await waitForDevice(core, DeviceID(plugin: "crashy", local: "lamp")) { connectivity($0) == .online }
        }
        #expect(bad.currentStatus.state == .invalidConfiguration)
    }

    @Test func hostOptions_areTakenOutOfTheSection_andCheckedByLine() throws {
        let (options, rest) = try PluginHostOptions.split(
            PluginConfiguration(
                value: ["isolated": true, "failures": 1], file: "/etc/hearth/hearth.yaml", keyPath: "plugins.flaky",
                lines: ["isolated": 3, "failures": 4]))
        #expect(options.isolated)
        #expect(rest.value == ["failures": 1])
        #expect(rest.lines == ["failures": 4])

        let (program, _) = try PluginHostOptions.split(
            PluginConfiguration(value: ["executable": "plugins/weather.py"], file: "/etc/hearth/hearth.yaml", keyPath: "plugins.weather"))
        #expect(program.executable == "/etc/hearth/plugins/weather.py")
        #expect(program.isolated)

        #expect(throws: HomeError.invalidArgument("hearth.yaml:3: plugins.flaky.isolated: expected true or false")) {
            try PluginHostOptions.split(section("flaky", ["isolated": "yes"], lines: ["isolated": 3]))
        }
    }

    @Test func hearthdCheck_reportsTheLineOfABadSection_andExitsWithConfigError() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        try dir.add(fixtures: ["FlakyPlugin", "WrongABIPlugin"])
        let config = try dir.write(
            "hearth.yaml",
            """
            log:
              level: error
            plugins:
              directories: [\(dir.path)]
              flaky:
                isolated: true
                failures: many
            """)
        let run = try await runProcess(hearthd, ["--config", config, "--check", "--include-test-fixtures"])
        #expect(run.status == 78)
        #expect(run.stderr.contains("hearthd: \(config):7: plugins.flaky.failures: expected an integer"), "\(run.stderr)")
        #expect(run.stderr.contains("libWrongABIPlugin.so"), "\(run.stderr)")
    }
}

/// Runs a program to its end; returns its exit status and standard error.
///
/// Awaits the exit (Foundation's `terminationHandler`) instead of blocking in
/// `readDataToEndOfFile`/`waitUntilExit`: those hold one of the concurrency pool's threads (two on
/// a 2-core machine) for as long as the program runs — minutes for `swift build` — and the
/// other suites of a parallel run starve. Standard error goes to a file, so no pipe can fill up.
func runProcess(_ program: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> (
    status: Int32, stderr: String
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let errors = NSTemporaryDirectory() + "hearth-run-\(UUID().uuidString).err"
    _ = FileManager.default.createFile(atPath: errors, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errors) }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
    defer { try? handle.close() }
    process.standardError = handle
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    let ended = AsyncStream<Void>.makeStream()
    process.terminationHandler = { _ in ended.continuation.finish() }
    try process.run()
    for await _ in ended.stream {}
    return (process.terminationStatus, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
}
