import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The real hearthd with the demo and MQTT plugins against a real mosquitto: `/metrics` on its
/// own listener and, for admins, on the API; each metric moves when its event happens.
@Suite(.serialized) struct MetricsEndpointTests {
    /// A running hearthd, stopped with SIGTERM at the end.
    final class Daemon: Sendable {
        let process: Process
        let dir: Scratch
        let apiPort: Int
        let metricsPort: Int
        let log: String

        init(broker: Broker) async throws {
            dir = try Scratch("hearth-metrics")
            apiPort = try Broker.freeLoopbackPort()
            metricsPort = try Broker.freeLoopbackPort()
            let fm = FileManager.default
            try fm.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
            for p in ["DemoPlugin", "MQTTPlugin"] {
                try fm.copyItem(atPath: "\(buildDirectory)/lib\(p).so", toPath: dir.at("plugins/lib\(p).so"))
            }
            try """
                storage:
                  database: \(dir.at("hearth.sqlite"))
                server:
                  listen: 127.0.0.1:\(apiPort)
                  stateDirectory: \(dir.at("state"))
                metrics:
                  listen: 127.0.0.2:\(metricsPort)  # not 127.0.0.1: the address must be read whole
                plugins:
                  directories: [\(dir.at("plugins"))]
                  mqtt:
                    broker: {host: 127.0.0.1, port: \(broker.port), reconnect: {minimumDelay: 1, maximumDelay: 1}}

                """.write(toFile: dir.at("hearth.yaml"), atomically: true, encoding: .utf8)
            log = dir.at("hearthd.log")
            _ = fm.createFile(atPath: log, contents: nil)
            process = Process()
            process.executableURL = URL(fileURLWithPath: buildDirectory + "/hearthd")
            process.arguments = ["--config", dir.at("hearth.yaml")]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try process.run()
        }

        func stop() {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            dir.remove()
        }
    }

    struct Reply: Sendable {
        let status: Int
        let body: String
        let contentType: String?
    }

    static func request(_ method: String, _ url: String, token: String? = nil, body: String? = nil) async throws -> Reply {
        var r = URLRequest(url: URL(string: url)!)
        r.httpMethod = method
        if let token { r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            r.httpBody = Data(body.utf8)
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: r)
        let http = response as! HTTPURLResponse
        return Reply(status: http.statusCode, body: String(decoding: data, as: UTF8.self), contentType: http.value(forHTTPHeaderField: "Content-Type"))
    }

    /// Series → value from Prometheus' text format.
    static func parse(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let v = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = v
        }
        return values
    }

    /// Publishes with the real mosquitto_pub.
    func publish(_ broker: Broker, _ topic: String, _ payload: String, retain: Bool = false) async throws {
        let r = try await run(
            "/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1", "-t", topic, "-m", payload] + (retain ? ["-r"] : []),
            in: NSTemporaryDirectory())
        #expect(r.status == 0, "mosquitto_pub: \(r.stderr)")
    }

    /// Scrapes until `condition` holds (a bound on a stuck daemon, not a pace).
    func scrape(_ d: Daemon, until condition: ([String: Double]) -> Bool, _ what: String) async throws -> [String: Double] {
        let deadline = ContinuousClock.now + .seconds(60)
        var last: [String: Double] = [:]
        while ContinuousClock.now < deadline {
            if let r = try? await Self.request("GET", "http://127.0.0.2:\(d.metricsPort)/metrics"), r.status == 200 {
                last = Self.parse(r.body)
                if condition(last) { return last }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("timed out waiting for \(what); last scrape: \(last.filter { $0.key.hasPrefix("hearth") })\nlog:\n\(read(d.log))")
        return last
    }

    @Test func metricsMoveWhenTheirEventsHappen() async throws {
        let broker = try await Broker()
        let d = try await Daemon(broker: broker)
        defer { d.stop() }

        // Up: the demo plugin reports, the process has a resident size, MQTT is connected.
        var m = try await scrape(
            d, until: { ($0[#"hearth_reports_total{plugin="demo"}"#] ?? 0) > 0 && $0["hearth_devices"] == 3 }, "the demo plugin's devices and reports")
        #expect((m["process_resident_memory_bytes"] ?? 0) > 1_000_000)
        #expect((m["process_open_fds"] ?? 0) > 0)
        #expect(m["hearth_devices"] == 3, "the demo plugin's three devices")

        // A device joins over MQTT discovery; its first reading counts as a report of plugin mqtt.
        let sensor = #"{"name":"Shed","unique_id":"shed-t","state_topic":"shed/t","device_class":"temperature","unit_of_measurement":"°C"}"#
        try await publish(broker, "homeassistant/sensor/shed/config", sensor, retain: true)
        m = try await scrape(d, until: { $0["hearth_devices"] == 4 }, "the MQTT sensor to be discovered")
        let mqttReports = m[#"hearth_reports_total{plugin="mqtt"}"#] ?? 0
        // Retained: the plugin may not have subscribed to the state topic yet.
        try await publish(broker, "shed/t", "12.5", retain: true)
        m = try await scrape(d, until: { ($0[#"hearth_reports_total{plugin="mqtt"}"#] ?? 0) > mqttReports }, "the MQTT reading")

        // A payload the mapping cannot read: counted, the daemon keeps running.
        #expect(m["hearth_mqtt_malformed_payloads_total"] == nil || m["hearth_mqtt_malformed_payloads_total"] == 0)
        try await publish(broker, "shed/t", "warm-ish", retain: true)
        m = try await scrape(d, until: { $0["hearth_mqtt_malformed_payloads_total"] == 1 }, "the malformed payload")

        // The admin signs in: /metrics on the API needs an admin's token.
        let api = "http://127.0.0.1:\(d.apiPort)"
        let code = read(d.dir.at("state/setup-code")).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!code.isEmpty)
        let setup = try await Self.request("POST", "\(api)/api/v1/auth/setup", body: #"{"code":"\#(code)","password":"correct horse battery"}"#)
        #expect(setup.status == 200, "\(setup.body)")
        let token = try #require(
            (try JSONSerialization.jsonObject(with: Data(setup.body.utf8)) as? [String: Any])?["token"] as? String)
        #expect(try await Self.request("GET", "\(api)/metrics").status == 401)
        let viaAPI = try await Self.request("GET", "\(api)/metrics", token: token)
        #expect(viaAPI.status == 200)
        #expect(viaAPI.contentType?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(viaAPI.body.contains("hearth_reports_total{plugin=\"demo\"}"))

        // A command, and a command the lamp does not know.
        let lamp = #"{"device":"demo:lamp","type":"OnOffLight","trait":"OnOff","command":"toggle"}"#
        #expect(try await Self.request("POST", "\(api)/api/v1/commands", token: token, body: lamp).status == 200)
        let bad = #"{"device":"demo:lamp","type":"OnOffLight","trait":"LevelControl","command":"moveToLevel","args":{"Level":3}}"#
        #expect(try await Self.request("POST", "\(api)/api/v1/commands", token: token, body: bad).status != 200)
        m = try await scrape(d, until: { $0[#"hearth_commands_total{plugin="demo"}"#] == 2 }, "two commands")
        #expect(m.contains { $0.key.hasPrefix(#"hearth_command_failures_total{plugin="demo""#) && $0.value == 1 })

        // hearthd's own change logger is a subscriber of the core.
        #expect((m["hearth_subscribers"] ?? 0) >= 1)
    }

    @Test func aFailingPluginCountsItsRestarts() async throws {
        let dir = try Scratch("hearth-metrics")
        defer { dir.remove() }
        let port = try Broker.freeLoopbackPort()
        try FileManager.default.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(buildDirectory)/libFlakyPlugin.so", toPath: dir.at("plugins/libFlakyPlugin.so"))
        try """
            storage: {database: \(dir.at("hearth.sqlite"))}
            metrics: {listen: 127.0.0.1:\(port)}
            plugins:
              directories: [\(dir.at("plugins"))]
              flaky: {failures: 2}

            """.write(toFile: dir.at("hearth.yaml"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: buildDirectory + "/hearthd")
        process.arguments = ["--config", dir.at("hearth.yaml"), "--include-test-fixtures"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let deadline = ContinuousClock.now + .seconds(60)
        var restarts: Double?
        while ContinuousClock.now < deadline {
            if let r = try? await Self.request("GET", "http://127.0.0.1:\(port)/metrics") {
                restarts = Self.parse(r.body)[#"hearth_plugin_restarts_total{plugin="flaky"}"#]
                if restarts == 2 { break }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(restarts == 2)
    }

    @Test func aMalformedMetricsSectionNamesItsLine() async throws {
        let dir = try Scratch("hearth-metrics")
        defer { dir.remove() }
        try "metrics: {listen: nowhere}\n".write(toFile: dir.at("bad.yaml"), atomically: true, encoding: .utf8)
        let bad = try await run(buildDirectory + "/hearthd", ["--config", dir.at("bad.yaml"), "--check"], in: dir.path)
        #expect(bad.status == 78)
        #expect(bad.stderr.contains("bad.yaml:1: metrics.listen: expected host:port"), "\(bad.stderr)")
    }
}
