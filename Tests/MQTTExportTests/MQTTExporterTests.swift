import DriverAPI
import Foundation
import HashTreeCollections
import HomeCore
import HomeModel
@testable import MQTTExport
import Synchronization
import TestSupport
import Testing

/// A client that records every message it sees (the last payload per topic).
final class Watcher: Sendable {
    let client: MosquittoClient
    /// The last payload per topic.
    final class Seen: Sendable {
        let m = Mutex<[String: [UInt8]]>([:])
    }
    let seen: Seen
    let task: Task<Void, Never>

    init(port: Int, subscribe patterns: [String]) async throws {
        let client = try MosquittoClient(.init(host: "127.0.0.1", port: port, clientID: "watcher-\(UUID().uuidString.prefix(6))"))
        self.client = client
        let seen = Seen()
        self.seen = seen
        let (ready, readyContinuation) = AsyncStream<Void>.makeStream()
        task = Task {
            for await event in client.events {
                switch event {
                case .connected:
                    for p in patterns { client.subscribe(p) }
                    readyContinuation.yield()
                case .message(let topic, let payload, _):
                    seen.m.withLock { $0[topic] = payload }
                case .disconnected: break
                }
            }
        }
        try client.start()
        var it = ready.makeAsyncIterator()
        _ = await it.next()
    }

    func stop() {
        client.stop()
        client.continuation.finish()
        task.cancel()
    }

    /// Waits (bounded by the caller's `within`) until `check` holds for what was seen.
    func until(_ check: @escaping @Sendable ([String: [UInt8]]) -> Bool) async {
        while !seen.m.withLock({ check($0) }) {
            if Task.isCancelled { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    func json(_ topic: String) -> [String: Any] { ExportFixtures.json(seen.m.withLock { $0[topic] } ?? []) }
}

@Suite(.serialized) struct MQTTExporterTests {
    let topics = ExportFixtures.topics

    func start(_ core: HomeCore, settings: ExposureSettings, port: Int) -> (MQTTExporter, Task<Void, any Error>) {
        let exporter = MQTTExporter(core: core, settings: settings, configuration: .init(port: port, nodeID: "hearth_a"))
        return (exporter, Task { try await exporter.run() })
    }

    @Test func exportsControlsAndCleansUpThroughARealBroker() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let stale = topics.config("switch", "gpio_gone_onoff")
        try await broker.mosquittoPub(stale, "{\"name\":\"gone\"}", retain: true)
        let (core, driver) = ExportFixtures.core()
        core.setCommandHandler(FakeOutputs(context: driver), for: "gpio")
        let settings = try ExposureSettings(store: nil)
        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#", "hearth/#"])
        defer { watcher.stop() }
        let (exporter, run) = start(core, settings: settings, port: broker.port)
        let relay = ExportTopics.slug("gpio:relay")
        let relayConfig = topics.config("switch", "\(relay)_onoff")
        try await within(20, "the relay's config and the stale config cleared") {
            await watcher.until { $0[relayConfig] != nil && $0[stale] == [] && $0[self.topics.bridgeAvailability] == Array("online".utf8) }
        }
        #expect(watcher.json(relayConfig)["unique_id"] as? String == "hearth_a_\(relay)_onoff")
        #expect(watcher.seen.m.withLock { $0.keys.contains { $0.contains("lock") } } == false, "the lock stays home")

        // A command from the broker goes through the core to the hardware, and back as state.
        try await broker.mosquittoPub(topics.command(relay, "onoff"), "ON")
        try await within(20, "the relay reports ON") {
            await watcher.until { ExportFixtures.json($0[self.topics.state(relay)] ?? [])["state"] as? String == "ON" }
        }
        #expect(core.state.devices["gpio:relay"]?.types[0].traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == .bool(true))

        // Hostile payloads are refused and counted; the exporter keeps working.
        for bad in ["MAYBE", String(repeating: "x", count: 5000), "\u{FFFF}"] { try await broker.mosquittoPub(topics.command(relay, "onoff"), bad) }
        try await within(20, "three refusals") { while exporter.refusedCommands < 3 { try await Task.sleep(for: .milliseconds(20)) } }
        try await broker.mosquittoPub(topics.command(relay, "onoff"), "OFF")
        try await within(20, "the relay reports OFF") {
            await watcher.until { ExportFixtures.json($0[self.topics.state(relay)] ?? [])["state"] as? String == "OFF" }
        }

        // Temperature in °C follows a report.
        driver.report("thermo", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, .int(1875))
        let thermo = ExportTopics.slug("gpio:thermo")
        try await within(20, "18.75 °C") { await watcher.until { ExportFixtures.json($0[self.topics.state(thermo)] ?? [])["temperature"] as? Double == 18.75 } }

        // Offline device → its availability says so.
        driver.setConnectivity(.offline, device: "thermo")
        try await within(20, "thermo offline") { await watcher.until { $0[self.topics.availability(thermo)] == Array("offline".utf8) } }

        // Decommissioned → configs cleared.
        try core.home(for: .system).edit(.decommission("gpio:relay"))
        try await within(20, "the relay's config cleared") { await watcher.until { $0[relayConfig] == [] } }

        // HA's birth message republishes: clear a config behind the exporter's back, then announce HA.
        let thermoConfig = topics.config("sensor", "\(thermo)_temperature")
        try await broker.mosquittoPub(thermoConfig, "", retain: true)
        try await within(20, "the cleared config seen") { await watcher.until { $0[thermoConfig] == [] } }
        try await broker.mosquittoPub("homeassistant/status", "online")
        try await within(20, "the config republished") { await watcher.until { !($0[thermoConfig] ?? []).isEmpty } }

        run.cancel()
        _ = try? await run.value
        try await within(20, "the bridge says offline on stop") { await watcher.until { $0[self.topics.bridgeAvailability] == Array("offline".utf8) } }
    }

    @Test func aPolicyEditRemovesAndAddsDevicesAndScopesCommands() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let (core, driver) = ExportFixtures.core()
        core.setCommandHandler(FakeOutputs(context: driver), for: "gpio")
        let settings = try ExposureSettings(store: nil)
        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#", "hearth/#"])
        defer { watcher.stop() }
        let (exporter, run) = start(core, settings: settings, port: broker.port)
        defer { run.cancel() }
        let relay = ExportTopics.slug("gpio:relay")
        let lock = ExportTopics.slug("gpio:lock")
        let relayConfig = topics.config("switch", "\(relay)_onoff")
        try await within(20, "the relay's config") { await watcher.until { $0[relayConfig] != nil } }

        // Only the hall, read-only, with the lock opted in by ID.
        let admin = Principal(id: "user:admin", role: .admin)
        let hall = try #require(core.state.rooms.values.first { $0.name == "Hall" }?.id)
        try settings.update(ExposurePolicy(rooms: [hall], devices: ["gpio:lock"], allowControl: false), by: admin)
        try await within(20, "the relay gone, the lock exported") {
            await watcher.until { $0[relayConfig] == [] && $0.keys.contains { $0.hasPrefix("hearth/hearth_a/\(lock)/") } }
        }
        #expect(exporter.exportedDevices.contains("gpio:lock"))
        // Read-only: a command for the lamp is refused by the core (the door's grant).
        let lamp = ExportTopics.slug("gpio:lamp")
        try await broker.mosquittoPub(topics.command(lamp, "onoff"), "OFF")
        try await within(20, "the refusal counted") {
            while exporter.failedCommands < 1 { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(core.state.devices["gpio:lamp"]?.types[0].traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == .bool(true))
    }

    @Test func aBrokerRestartRepublishesEverything() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let (core, _) = ExportFixtures.core()
        let settings = try ExposureSettings(store: nil)
        let (_, run) = start(core, settings: settings, port: broker.port)
        defer { run.cancel() }
        let relayConfig = topics.config("switch", "\(ExportTopics.slug("gpio:relay"))_onoff")
        do {
            let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#"])
            try await within(20, "the relay's config") { await watcher.until { $0[relayConfig] != nil } }
            watcher.stop()
        }
        // The test broker keeps nothing across a restart: what a new subscriber sees is republished.
        try await broker.restart()
        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#"])
        defer { watcher.stop() }
        try await within(30, "the relay's config after the restart") { await watcher.until { $0[relayConfig] != nil } }
    }
}
