import Foundation
import TestSupport
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
    /// hearthd (the shared ``Daemon``) in a scratch folder, with a metrics listener on 127.0.0.2
    /// (not 127.0.0.1: the address must be read whole).
    struct Running {
        let dir: Scratch
        let daemon: Daemon
        let metrics: String

        /// `plugins` are copied from the build folder; `yaml` is the rest of hearth.yaml.
        init(plugins: [String], yaml: String, arguments: [String] = []) throws {
            dir = try Scratch("hearth-metrics")
            let fm = FileManager.default
            try fm.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
            for p in plugins { try fm.copyItem(atPath: "\(buildDirectory)/lib\(p).so", toPath: dir.at("plugins/lib\(p).so")) }
            let port = try Broker.freeLoopbackPort()
            metrics = "http://127.0.0.2:\(port)/metrics"
            try """
                storage: {database: \(dir.at("hearth.sqlite"))}
                metrics: {listen: "127.0.0.2:\(port)"}
                \(yaml)
                """.write(toFile: dir.at("hearth.yaml"), atomically: true, encoding: .utf8)
            daemon = try Daemon(config: dir.at("hearth.yaml"), in: dir.path, arguments: ["--plugins", dir.at("plugins")] + arguments)
        }

        func stop() {
            daemon.stop()
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

    /// Scrapes until `condition` holds (a bound on a stuck daemon, not a pace).
    func scrape(_ d: Running, until condition: ([String: Double]) -> Bool, _ what: String) async throws -> [String: Double] {
        let deadline = ContinuousClock.now + .seconds(60)
        var last: [String: Double] = [:]
        while ContinuousClock.now < deadline {
            if let r = try? await Self.request("GET", d.metrics), r.status == 200 {
                last = Self.parse(r.body)
                if condition(last) { return last }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let log = d.daemon.lines.joined(separator: "\n")
        Issue.record("timed out waiting for \(what); last scrape: \(last.filter { $0.key.hasPrefix("hearth") })\nlog:\n\(log)")
        return last
    }

    @Test func metricsMoveWhenTheirEventsHappen() async throws {
        let broker = try await Broker()
        let apiPort = try Broker.freeLoopbackPort()
        let d = try Running(
            plugins: ["DemoPlugin", "MQTTPlugin"],
            yaml: """
                server: {listen: "127.0.0.1:\(apiPort)"}
                plugins:
                  mqtt:
                    broker: {host: 127.0.0.1, port: \(broker.port), reconnect: {minimumDelay: 1, maximumDelay: 1}}
                """)
        defer { d.stop() }

        // Up: the demo plugin reports, the process has a resident size, MQTT is connected.
        var m = try await scrape(
            d, until: { ($0[#"hearth_reports_total{plugin="demo"}"#] ?? 0) > 0 && $0["hearth_devices"] == 3 }, "the demo plugin's devices and reports")
        #expect((m["process_resident_memory_bytes"] ?? 0) > 1_000_000)
        #expect((m["process_open_fds"] ?? 0) > 0)
        #expect(m["hearth_devices"] == 3, "the demo plugin's three devices")

        // A device joins over MQTT discovery; its first reading counts as a report of plugin mqtt.
        let sensor = #"{"name":"Shed","unique_id":"shed-t","state_topic":"shed/t","device_class":"temperature","unit_of_measurement":"°C"}"#
        try await broker.mosquitto.mosquittoPub("homeassistant/sensor/shed/config", sensor, retain: true)
        m = try await scrape(d, until: { $0["hearth_devices"] == 4 }, "the MQTT sensor to be discovered")
        let mqttReports = m[#"hearth_reports_total{plugin="mqtt"}"#] ?? 0
        // Retained: the plugin may not have subscribed to the state topic yet.
        try await broker.mosquitto.mosquittoPub("shed/t", "12.5", retain: true)
        m = try await scrape(d, until: { ($0[#"hearth_reports_total{plugin="mqtt"}"#] ?? 0) > mqttReports }, "the MQTT reading")

        // A payload the mapping cannot read: counted, the daemon keeps running.
        #expect(m["hearth_mqtt_malformed_payloads_total"] == nil || m["hearth_mqtt_malformed_payloads_total"] == 0)
        try await broker.mosquitto.mosquittoPub("shed/t", "warm-ish", retain: true)
        m = try await scrape(d, until: { $0["hearth_mqtt_malformed_payloads_total"] == 1 }, "the malformed payload")

        // The admin signs in: /metrics on the API needs an admin's token.
        let api = "http://127.0.0.1:\(apiPort)"
        // The state folder (setup code) defaults to the database's folder.
        let code = read(d.dir.at("setup-code")).trimmingCharacters(in: .whitespacesAndNewlines)
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
        let d = try Running(
            plugins: ["FlakyPlugin"], yaml: "plugins: {flaky: {failures: 2}}", arguments: ["--include-test-fixtures"])
        defer { d.stop() }
        let m = try await scrape(d, until: { $0[#"hearth_plugin_restarts_total{plugin="flaky"}"#] == 2 }, "two restarts")
        #expect(m[#"hearth_plugin_restarts_total{plugin="flaky"}"#] == 2)
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
