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

    @Test func readiness_fails_when_storage_does_not_answer() {
        let r = Readiness.evaluate(storage: .failure(HomeError.internal("disk I/O error")), deviceCount: 3, plugins: [])
        #expect(!r.ready)
        #expect(r.checks.first { $0.name == "storage" }?.reason?.contains("disk I/O error") == true)
        let ok = Readiness.evaluate(storage: .success(()), deviceCount: 3, plugins: [])
        #expect(ok.ready)
        #expect(ok.checks.first { $0.name == "core" }?.detail == "3 devices")
    }
}
