import Foundation
import HearthAPI
import HearthClient
import HomeModel
@testable import MQTTExport
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real thing: two hearthd processes and a real mosquitto on loopback. Hearth A runs the GPIO
/// plugin on a simulated chip and exports; Hearth B runs the MQTT plugin, imports, and is driven
/// through its HTTP API as an admin would.
@Suite(.serialized) struct TwoDaemonFederationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let build = root.appendingPathComponent(".build/debug").path

    /// hearthd in the background; its standard error goes to a file in its folder.
    final class Hearthd: @unchecked Sendable {  // a Process, used from the test only
        let process: Process
        let log: String
        init(config: String, directory: String) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: TwoDaemonFederationTests.build + "/hearthd")
            p.arguments = ["--config", config, "--plugins", TwoDaemonFederationTests.build]
            p.currentDirectoryURL = URL(fileURLWithPath: directory)
            log = directory + "/hearthd.log"
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            p.standardOutput = FileHandle.nullDevice
            p.standardInput = FileHandle.nullDevice
            try p.run()
            process = p
        }
        var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        func kill9() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }
        deinit { kill9() }
    }

    static func folder(_ name: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-fed-\(name)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func aGarageHearthExportsAndAHouseHearthImportsAndControls() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.build + "/hearthd"),
            FileManager.default.fileExists(atPath: Self.build + "/libGPIOPlugin.so")
        else {
            Issue.record("hearthd and the plugins must be built first (swift build --build-tests)")
            return
        }
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        // A stale config of a device A no longer has: A cleans it up on start.
        let stale = "homeassistant/switch/hearth_a/gpio_gone_xxxxxxxx_onoff/config"
        try await broker.mosquittoPub(stale, "{\"name\":\"gone\"}", retain: true)

        let dirA = try Self.folder("a")
        let control = dirA + "/gpio-sim"
        try """
            storage: { database: hearth.sqlite }
            plugins:
              mqtt: { enabled: false }
              demo: { enabled: false }
              gpio:
                simulated:
                  - { chip: sim0, lines: [DOOR, BUTTON, RELAY], control: \(control) }
                lines:
                  - { id: garage-door, chip: sim0, line: DOOR, role: contact, name: Garage door, room: Garage }
                  - { id: garage-button, chip: sim0, line: BUTTON, role: button, name: Garage button, room: Garage }
                  - { id: garage-relay, chip: sim0, line: RELAY, role: relay, name: Garage relay, room: Garage }
            exposure:
              mqtt: { broker: 127.0.0.1:\(broker.port), nodeID: hearth_a }
            """.write(toFile: dirA + "/hearth.yaml", atomically: true, encoding: .utf8)
        let apiPort = try MosquittoBroker.freeLoopbackPort()
        let dirB = try Self.folder("b")
        try """
            storage: { database: hearth.sqlite }
            server: { listen: 127.0.0.1:\(apiPort), stateDirectory: state }
            plugins:
              gpio: { enabled: false }
              demo: { enabled: false }
              mqtt:
                broker: { host: 127.0.0.1, port: \(broker.port), clientID: hearth-b, reconnect: { minimumDelay: 1, maximumDelay: 1 } }
            exposure:
              mqtt: { broker: 127.0.0.1:\(broker.port), nodeID: hearth_b }
            """.write(toFile: dirB + "/hearth.yaml", atomically: true, encoding: .utf8)

        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#", "hearth/#"])
        defer { watcher.stop() }
        var a = try Hearthd(config: dirA + "/hearth.yaml", directory: dirA)
        defer { a.kill9() }
        let b = try Hearthd(config: dirB + "/hearth.yaml", directory: dirB)
        defer { b.kill9() }

        try await within(30, "A's stale config cleared and its relay config published") {
            await watcher.until { $0[stale] == [] && $0.keys.contains { $0.hasPrefix("homeassistant/switch/hearth_a/") && $0.contains("garage-relay") } }
        }

        // B, as its admin, through its API.
        let codeFile = dirB + "/state/setup-code"
        let code = try await within(30, "B's setup code") { () async throws -> String in
            while true {
                if let c = try? String(contentsOfFile: codeFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !c.isEmpty { return c }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        // The code file is written before the server listens: retry while it cannot be reached.
        let home = try await within(30, "B's API") { () async throws -> Home in
            while true {
                do {
                    return try await Home.setup(url: URL(string: "http://127.0.0.1:\(apiPort)")!, code: code, password: "correct horse battery")
                } catch let e as HomeError where e.code.rawValue == "unreachable" {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        func discovered(_ name: String) async throws -> HomeDevice {
            try await within(30, "\(name) discovered on B") { () async throws -> HomeDevice in
                while true {
                    if let d = try await home.discoveredDevices().list().first(where: { $0.name == name }) { return d }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        let relay = try await discovered("Garage relay")
        #expect(relay.id.pluginID == "mqtt")
        #expect(relay.snapshot.types.contains { $0.id == OnOffPlugInUnitDeviceType.identifier })
        let door = try await discovered("Garage door")
        #expect(door.snapshot.types.contains { $0.id == ContactSensorDeviceType.identifier })
        let button = try await discovered("Garage button")
        #expect(button.snapshot.types.contains { $0.id == GenericSwitchDeviceType.identifier })
        // B exports nothing of what it imported (no loops), and A never imported itself.
        #expect(watcher.seen.m.withLock { $0.keys.contains { $0.hasPrefix("homeassistant/switch/hearth_b/") } } == false)

        // B commissions and switches A's relay: the simulated line goes high on A, and the state comes back.
        let structure = try await home.createStructure(named: "House")
        _ = try await home.commission(relay.id, name: "Garage relay", structure: structure.id)
        // Its availability arrives after its discovery config; a command to a trait still
        // `unknown` fails fast with deviceOffline.
        try await within(30, "the relay online on B") {
            while try await home.currentDevice(id: relay.id).snapshot.sourceConnectivity.connectivityState != .online {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        _ = try await home.invoke(CommandRequest(device: relay.id, deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        try await within(30, "B sees the relay on") {
            while true {
                let d = try await home.currentDevice(id: relay.id)
                if d.snapshot.type(OnOffPlugInUnitDeviceType.identifier)?.traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == .bool(true) { return }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        // A dies without a goodbye: the broker's last will marks A's devices offline on B.
        a.kill9()
        try await within(30, "B marks the relay offline (LWT)") {
            while true {
                let d = try await home.currentDevice(id: relay.id)
                if d.snapshot.sourceConnectivity.connectivityState == .offline { return }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        // A comes back; then the broker restarts (it keeps nothing): A republishes, B sees it online again.
        a = try Hearthd(config: dirA + "/hearth.yaml", directory: dirA)
        try await broker.restart()
        try await within(40, "B sees the relay online after A's restart and the broker's") {
            while true {
                if let d = try? await home.currentDevice(id: relay.id), d.snapshot.sourceConnectivity.connectivityState != .offline { return }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        a.stop()
        b.stop()
        #expect(!a.output.contains("Fatal error"), "\(a.output.suffix(2000))")
    }
}
