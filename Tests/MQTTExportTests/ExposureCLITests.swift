import Foundation
import HearthAPI
import HearthClient
import HomeModel
@testable import MQTTExport
import Synchronization
import TestSupport
import Testing

/// `hearth exposure` for real: the built `hearth` CLI against a real hearthd (simulated GPIO,
/// MQTT export) and a real mosquitto. What the CLI sets is what the broker then carries, and it
/// survives a restart of the daemon.
@Suite(.serialized) struct ExposureCLITests {
    struct Run {
        let status: Int32
        let output: String
    }

    /// Runs `hearth` to its end with its own config folder; output goes to a file (no pipe to fill).
    static func hearth(_ arguments: [String], configDirectory: String, stdin: String = "") async throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TwoDaemonFederationTests.build + "/hearth")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["HEARTH_CONFIG_DIR"] = configDirectory
        env.removeValue(forKey: "HEARTH_URL")
        env.removeValue(forKey: "HEARTH_PASSWORD")
        process.environment = env
        let out = configDirectory + "/out-\(UUID().uuidString.prefix(8))"
        let input = configDirectory + "/in-\(UUID().uuidString.prefix(8))"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: input, contents: Data(stdin.utf8))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
        let ended = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in ended.continuation.finish() }
        try process.run()
        for await _ in ended.stream {}
        return Run(status: process.terminationStatus, output: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    @Test func hearthExposureShowsSetsSurvivesARestartAndResets() async throws {
        guard FileManager.default.isExecutableFile(atPath: TwoDaemonFederationTests.build + "/hearth"),
            FileManager.default.isExecutableFile(atPath: TwoDaemonFederationTests.build + "/hearthd"),
            FileManager.default.fileExists(atPath: TwoDaemonFederationTests.build + "/libGPIOPlugin.so")
        else {
            Issue.record("hearth, hearthd and the plugins must be built first (swift build --build-tests)")
            return
        }
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let dir = try TwoDaemonFederationTests.folder("cli")
        let cliDir = dir + "/cli"
        try FileManager.default.createDirectory(atPath: cliDir, withIntermediateDirectories: true)
        let apiPort = try MosquittoBroker.freeLoopbackPort()
        try """
            storage: { database: hearth.sqlite }
            server: { listen: 127.0.0.1:\(apiPort), stateDirectory: state }
            plugins:
              mqtt: { enabled: false }
              demo: { enabled: false }
              gpio:
                simulated:
                  - { chip: sim0, lines: [DOOR, RELAY], control: \(dir)/gpio-sim }
                lines:
                  - { id: garage-door, chip: sim0, line: DOOR, role: contact, name: Garage door, room: Garage }
                  - { id: garage-relay, chip: sim0, line: RELAY, role: relay, name: Garage relay, room: Garage }
            exposure:
              mqtt: { broker: 127.0.0.1:\(broker.port), nodeID: hearth_cli }
            """.write(toFile: dir + "/hearth.yaml", atomically: true, encoding: .utf8)
        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#"])
        defer { watcher.stop() }
        var daemon = try TwoDaemonFederationTests.Hearthd(config: dir + "/hearth.yaml", directory: dir)
        defer { daemon.kill9() }

        let topics = ExportTopics(prefix: "homeassistant", nodeID: "hearth_cli", base: "hearth/hearth_cli")
        let relay = ExportTopics.slug("gpio:garage-relay")
        let door = ExportTopics.slug("gpio:garage-door")
        let switchConfig = topics.config("switch", "\(relay)_onoff")
        let relaySensorConfig = topics.config("binary_sensor", "\(relay)_onoff")
        let doorConfig = topics.config("binary_sensor", "\(door)_contact")
        try await within(30, "the relay and the door exported") { await watcher.until { $0[switchConfig] != nil && $0[doorConfig] != nil } }

        // The admin, made with the setup code; then `hearth login` as a person would.
        let code = try await within(30, "the setup code") { () async throws -> String in
            while true {
                if let c = try? String(contentsOfFile: dir + "/state/setup-code", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
                    !c.isEmpty
                {
                    return c
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let url = URL(string: "http://127.0.0.1:\(apiPort)")!
        _ = try await within(30, "hearthd's API") { () async throws -> Home in
            while true {
                do {
                    return try await Home.setup(url: url, code: code, password: "correct horse battery")
                } catch let e as HomeError where e.code.rawValue == "unreachable" {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        let login = try await Self.hearth(
            ["login", "--url", url.absoluteString, "--username", "admin", "--password-stdin"], configDirectory: cliDir, stdin: "correct horse battery\n")
        #expect(login.status == 0, "\(login.output)")

        // `hearth exposure` (the default subcommand): the door on, hearth.yaml's policy, each verdict.
        let shown = try await Self.hearth(["exposure"], configDirectory: cliDir)
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.output.contains("Doors: mqtt"), "\(shown.output)")
        #expect(shown.output.contains("Policy from: hearth.yaml"), "\(shown.output)")
        #expect(shown.output.contains("Control: allowed"), "\(shown.output)")
        #expect(shown.output.split(separator: "\n").contains { $0.contains("gpio:garage-relay") && $0.contains("exposed") }, "\(shown.output)")

        // Exclude the door, read only: the broker loses the door's config, the relay becomes a sensor.
        let set = try await Self.hearth(["exposure", "set", "--exclude-device", "gpio:garage-door", "--read-only"], configDirectory: cliDir)
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("Policy from: an admin's edit") && set.output.contains("Control: read only"), "\(set.output)")
        #expect(set.output.split(separator: "\n").contains { $0.contains("gpio:garage-door") && $0.contains("excludedDevice") }, "\(set.output)")
        try await within(30, "the door cleared, the relay a binary sensor without a command topic") {
            await watcher.until { $0[doorConfig] == [] && $0[switchConfig] == [] && $0[relaySensorConfig] != nil }
        }
        #expect(!String(decoding: watcher.seen.m.withLock { $0[relaySensorConfig] } ?? [], as: UTF8.self).contains("command_topic"))

        // The admin's edit is kept in the database: a restarted hearthd still applies it.
        daemon.stop()
        daemon = try TwoDaemonFederationTests.Hearthd(config: dir + "/hearth.yaml", directory: dir)
        let json = try await within(30, "hearth exposure --json after the restart") { () async throws -> Run in
            while true {
                let r = try await Self.hearth(["exposure", "--json"], configDirectory: cliDir)
                if r.status == 0 { return r }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let exposure = try JSONDecoder().decode(WireExposure.self, from: Data(json.output.utf8))
        #expect(exposure.source == .admin)
        #expect(exposure.policy.allowControl == false)
        #expect(exposure.policy.excludedDevices == ["gpio:garage-door"])
        #expect(exposure.devices.first { $0.id == "gpio:garage-relay" }?.verdict.rawValue == "exposed")

        // A mistyped room is refused with the reason, and nothing changes.
        let bad = try await Self.hearth(["exposure", "set", "--room", "Attic"], configDirectory: cliDir)
        #expect(bad.status != 0, "\(bad.output)")
        #expect(bad.output.contains("Attic"), "\(bad.output)")

        // Reset: hearth.yaml's policy again, and the broker has the switch and the door back.
        let reset = try await Self.hearth(["exposure", "reset"], configDirectory: cliDir)
        #expect(reset.status == 0, "\(reset.output)")
        #expect(reset.output.contains("Policy from: hearth.yaml") && reset.output.contains("Control: allowed"), "\(reset.output)")
        do {
            try await within(30, "the switch and the door back") {
                await watcher.until { !($0[switchConfig] ?? []).isEmpty && !($0[doorConfig] ?? []).isEmpty && $0[relaySensorConfig] == [] }
            }
        } catch {
            let seen = watcher.seen.m.withLock { s in [switchConfig, doorConfig, relaySensorConfig].map { "\($0): \(s[$0].map { String(decoding: $0, as: UTF8.self).prefix(80) } ?? "never")" } }
            Issue.record("after the reset the broker had \(seen.joined(separator: "; ")); hearthd said: \(daemon.output.suffix(3000))")
            throw error
        }
        daemon.stop()
        #expect(!daemon.output.contains("Fatal error"), "\(daemon.output.suffix(2000))")
    }
}
