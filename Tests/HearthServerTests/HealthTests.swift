import Foundation
import HearthAPI
import HearthServer
import HomeModel
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct HealthTests {
    static func status(_ id: String, _ state: WirePlugin.State, error: String? = nil) -> WirePlugin {
        WirePlugin(id: id, name: id, version: "1.0", path: "/usr/lib/hearth/plugins/lib\(id).so", state: state, lastError: error)
    }

    func get(_ home: TestHome, _ path: String) async throws -> TestHome.Reply {
        let (data, response) = try await URLSession(configuration: .ephemeral).data(from: URL(string: "\(home.baseURL.absoluteString)/\(path)")!)
        return TestHome.Reply(status: (response as? HTTPURLResponse)?.statusCode ?? 0, data: data)
    }

    @Test func healthz_answers_ok_without_signing_in() async throws {
        try await TestHome.with { home in
            let reply = try await get(home, "healthz")
            #expect(reply.status == 200)
            #expect(reply.json["status"]?.stringValue == "ok")
        }
    }

    @Test func readyz_waits_for_every_enabled_plugin_to_run() async throws {
        let plugins = Mutex([Self.status("mqtt", .starting), Self.status("gpio", .running), Self.status("demo", .disabled)])
        try await TestHome.with(pluginStatuses: { plugins.withLock { $0 } }) { home in
            let before = try await get(home, "readyz")
            #expect(before.status == 503)
            #expect(before.json["status"]?.stringValue == "not ready")
            #expect(before.text.contains("plugin:mqtt"))
            #expect(before.text.contains("plugin is starting"))
            #expect(!before.text.contains("plugin:demo"))

            plugins.withLock { $0[0].state = .running }
            let after = try await get(home, "readyz")
            #expect(after.status == 200)
            #expect(after.json["status"]?.stringValue == "ready")
            #expect(after.text.contains("plugin:gpio"))
        }
    }

    @Test func readyz_names_a_parked_plugin_and_its_last_error() async throws {
        let plugins = [Self.status("mqtt", .parked, error: "broker 127.0.0.1:1883 refused the connection")]
        try await TestHome.with(pluginStatuses: { plugins }) { home in
            let reply = try await get(home, "readyz")
            #expect(reply.status == 503)
            #expect(reply.text.contains("plugin is parked: broker 127.0.0.1:1883 refused the connection"))
            #expect(reply.text.contains("\"storage\""))
        }
    }

    @Test func readyz_is_503_while_a_running_plugin_says_it_is_unhealthy_and_200_when_degraded() async throws {
        var mqtt = Self.status("mqtt", .running)
        mqtt.health = WirePlugin.Health(state: .unhealthy, reason: "lost the MQTT broker at 127.0.0.1:1883: connection refused; reconnecting")
        let plugins = Mutex([mqtt, Self.status("gpio", .running)])
        try await TestHome.with(pluginStatuses: { plugins.withLock { $0 } }) { home in
            let down = try await get(home, "readyz")
            #expect(down.status == 503)
            #expect(down.json["status"]?.stringValue == "not ready")
            #expect(down.text.contains("plugin is unhealthy: lost the MQTT broker at 127.0.0.1:1883: connection refused"), "\(down.text)")

            plugins.withLock { $0[0].health = WirePlugin.Health(state: .degraded, reason: "2 of 9 devices unreachable") }
            let degraded = try await get(home, "readyz")
            #expect(degraded.status == 200)
            #expect(degraded.json["status"]?.stringValue == "ready")
            #expect(degraded.text.contains("degraded: 2 of 9 devices unreachable"), "\(degraded.text)")

            plugins.withLock { $0[0].health = WirePlugin.Health(state: .healthy, reason: "connected to the MQTT broker at 127.0.0.1:1883") }
            let healthy = try await get(home, "readyz")
            #expect(healthy.status == 200)
            #expect(healthy.text.contains("connected to the MQTT broker"))
        }
    }

    @Test func a_plugins_health_is_on_the_wire_of_get_plugins() throws {
        var mqtt = Self.status("mqtt", .running)
        mqtt.health = WirePlugin.Health(state: .unhealthy, reason: "connecting")
        let data = try JSONEncoder().encode(mqtt)
        let back = try JSONDecoder().decode(WirePlugin.self, from: data)
        #expect(back.health == mqtt.health)
        #expect(String(decoding: data, as: UTF8.self).contains(#""state":"unhealthy""#))
        // A plugin that said nothing about its health has no `health` field.
        let quiet = try JSONDecoder().decode(WirePlugin.self, from: JSONEncoder().encode(Self.status("gpio", .running)))
        #expect(quiet.health == nil)
    }

    @Test func readiness_fails_when_storage_does_not_answer() {
        let r = Readiness.evaluate(storage: .failure(HomeError.internal("disk I/O error")), deviceCount: 3, plugins: [])
        #expect(!r.ready)
        #expect(r.checks.first { $0.name == "storage" }?.reason?.contains("disk I/O error") == true)
        let ok = Readiness.evaluate(storage: .success(()), deviceCount: 3, plugins: [])
        #expect(ok.ready)
        #expect(ok.checks.first { $0.name == "core" }?.detail == "3 devices")
    }
}
