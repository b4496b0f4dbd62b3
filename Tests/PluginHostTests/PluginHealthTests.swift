import DriverAPI
import DriverTesting
import Foundation
import HomeCore
import HomeModel
import PluginHost
import TestSupport
import Testing

/// A plugin's own word on its health (`DriverContext.reportHealth`) reaches the host's status
/// (what `GET /plugins` and `/readyz` show), in process and over the isolated-plugin wire: the
/// real MQTT plugin `.so` against a real mosquitto that is stopped and started again.
@Suite(.serialized) struct PluginHealthTests {
    func service(isolated: Bool, broker: MosquittoBroker, core: HomeCore) throws -> PluginService<ManualClock> {
        let path = "\(buildDirectory)/libMQTTPlugin.so"
        let loaded: LoadedPlugin
        if isolated {
            let manifest = PluginManifest(id: "mqtt", name: "MQTT", version: "")
            let plugin = IsolatedPlugin(manifest: manifest, launch: .pluginHost(hearthd: hearthd, plugin: path, environment: childEnvironment))
            loaded = LoadedPlugin(path: path, manifest: manifest, plugin: plugin)
        } else {
            loaded = try PluginLoader.load(path)
        }
        let config: Value = [
            "broker": ["host": "127.0.0.1", "port": .int(Int64(broker.port)), "reconnect": ["minimumDelay": 1, "maximumDelay": 1]]
        ]
        return PluginService(loaded, core: core, configuration: section("mqtt", config), clock: ManualClock(), logger: testLogger)
    }

    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func brokerStoppedAndStarted_theStatusCarriesThePluginsHealth(isolated: Bool) async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let endpoint = "127.0.0.1:\(broker.port)"
        let mqtt = try service(isolated: isolated, broker: broker, core: HomeCore())
        try await withServices([mqtt]) {
            let up = try await within(20, "healthy") { await mqtt.waitForStatus { $0.health?.state == .healthy } }
            #expect(up?.state == .running)
            #expect(up?.health?.reason == "connected to the MQTT broker at \(endpoint)")
            #expect(up?.isolated == isolated)

            broker.stop()
            let down = try await within(20, "unhealthy") { await mqtt.waitForStatus { $0.health?.state == .unhealthy } }
            #expect(down?.state == .running, "the plugin runs on; its broker is what is down")
            #expect(down?.health?.reason?.contains("MQTT broker at \(endpoint)") == true, "\(down?.health?.reason ?? "")")

            try await broker.restart()
            _ = try await within(20, "healthy again") { await mqtt.waitForStatus { $0.health?.state == .healthy } }
        }
        #expect(mqtt.currentStatus.state == .stopped)
        #expect(mqtt.currentStatus.health == nil, "a stopped plugin's last word on its health no longer holds")
    }
}
