import DriverAPI
import Foundation
import HashTreeCollections
import HomeCore
import HomeModel
import Logging
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

    func start(_ core: HomeCore, settings: ExposureSettings, port: Int, logger: Logger = Logger(label: "test.export")) -> (MQTTExporter, Task<Void, any Error>) {
        let exporter = MQTTExporter(core: core, settings: settings, configuration: .init(port: port, nodeID: "hearth_a"), logger: logger)
        return (exporter, Task { try await exporter.run() })
    }

    @Test func aColourLightIsControlledWithHomeAssistantsJSONCommands() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let (core, driver) = ExportFixtures.core()
        core.setCommandHandler(FakeOutputs(context: driver), for: "gpio")
        let settings = try ExposureSettings(store: nil)
        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#", "hearth/#"])
        defer { watcher.stop() }
        let (exporter, run) = start(core, settings: settings, port: broker.port)
        defer { run.cancel() }
        let bulb = ExportTopics.slug("gpio:bulb")
        let config = topics.config("light", "\(bulb)_light")
        try await within(20, "the bulb's config") { await watcher.until { $0[config] != nil } }
        #expect(watcher.json(config)["supported_color_modes"] as? [String] == ["color_temp", "hs", "xy"])
        #expect(watcher.json(config)["min_mireds"] as? Int == 153)
        func state() -> [String: Any] { watcher.json(topics.state(bulb)) }

        // What HA sends for a colour temperature: on, then the temperature, back as state in mireds.
        try await broker.mosquittoPub(topics.command(bulb, "light"), #"{"state":"ON","color_temp":370}"#)
        try await within(20, "the bulb on at 370 mireds") {
            await watcher.until { s in
                let j = ExportFixtures.json(s[self.topics.state(bulb)] ?? [])
                return j["state"] as? String == "ON" && j["color_mode"] as? String == "color_temp" && j["color_temp"] as? Int == 370
            }
        }
        // Hue and saturation (HA: degrees and percent; Matter: 0…254).
        try await broker.mosquittoPub(topics.command(bulb, "light"), #"{"state":"ON","color":{"h":180,"s":100}}"#)
        try await within(20, "hs colour") {
            await watcher.until { s in ExportFixtures.json(s[self.topics.state(bulb)] ?? [])["color_mode"] as? String == "hs" }
        }
        let hs = try #require(state()["color"] as? [String: Any])
        #expect(hs["h"] as? Double == 180.0 && hs["s"] as? Double == 100.0, "\(hs)")
        #expect(core.state.devices["gpio:bulb"]?.types[0].traits[ColorControlTrait.identifier]?[ColorControlTrait.Attribute.currentHue] == .int(127))
        // xy and brightness together.
        try await broker.mosquittoPub(topics.command(bulb, "light"), #"{"state":"ON","brightness":255,"color":{"x":0.7,"y":0.3}}"#)
        try await within(20, "xy colour at brightness 255") {
            await watcher.until { s in
                let j = ExportFixtures.json(s[self.topics.state(bulb)] ?? [])
                return j["color_mode"] as? String == "xy" && j["brightness"] as? Int == 255
            }
        }
        let xy = try #require(state()["color"] as? [String: Any])
        #expect(xy["x"] as? Double == 0.7 && xy["y"] as? Double == 0.3, "\(xy)")
        // A colour the light has no mode for, and a broken one: refused and counted, nothing sent.
        let lamp = ExportTopics.slug("gpio:lamp")
        try await broker.mosquittoPub(topics.command(lamp, "light"), #"{"state":"ON","color_temp":300}"#)
        try await broker.mosquittoPub(topics.command(bulb, "light"), #"{"state":"ON","color":{"r":1}"#)
        try await within(20, "two refusals") { while exporter.refusedCommands < 2 { try await Task.sleep(for: .milliseconds(20)) } }
        #expect(exporter.failedCommands == 0)
    }

    @Test func aReadOnlyExportAdvertisesNoCommandTopicsAndRefusesCommands() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let (core, driver) = ExportFixtures.core()
        core.setCommandHandler(FakeOutputs(context: driver), for: "gpio")
        let settings = try ExposureSettings(configured: ExposurePolicy(allowControl: false), store: nil)
        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#", "hearth/#"])
        defer { watcher.stop() }
        let (exporter, run) = start(core, settings: settings, port: broker.port)
        defer { run.cancel() }
        let relay = ExportTopics.slug("gpio:relay")
        let sensorConfig = topics.config("binary_sensor", "\(relay)_onoff")
        let bulbConfig = topics.config("binary_sensor", "\(ExportTopics.slug("gpio:bulb"))_light")
        try await within(20, "the relay and bulb as binary sensors") { await watcher.until { $0[sensorConfig] != nil && $0[bulbConfig] != nil } }
        let configs = watcher.seen.m.withLock { $0.filter { $0.key.hasSuffix("/config") && !$0.value.isEmpty } }
        #expect(configs.count > 5)
        for (topic, payload) in configs {
            #expect(!String(decoding: payload, as: UTF8.self).contains("command_topic"), "\(topic) advertises a command topic")
        }
        #expect(!configs.keys.contains { $0.hasPrefix("homeassistant/switch/") || $0.hasPrefix("homeassistant/light/") })
        // Commands sent anyway are refused by the exporter and counted; the relay stays off.
        try await broker.mosquittoPub(topics.command(relay, "onoff"), "ON")
        try await broker.mosquittoPub(topics.command(ExportTopics.slug("gpio:bulb"), "light"), #"{"state":"ON"}"#)
        try await within(20, "two refusals") { while exporter.refusedCommands < 2 { try await Task.sleep(for: .milliseconds(20)) } }
        #expect(core.state.devices["gpio:relay"]?.types[0].traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == .bool(false))

        // An admin allows control: the switch comes back and the binary sensor's config is cleared.
        try settings.update(ExposurePolicy(), by: Principal(id: "user:admin", role: .admin))
        let switchConfig = topics.config("switch", "\(relay)_onoff")
        try await within(20, "the switch back, the sensor cleared") { await watcher.until { $0[switchConfig] != nil && $0[sensorConfig] == [] } }
        try await broker.mosquittoPub(topics.command(relay, "onoff"), "ON")
        try await within(20, "the relay reports ON") {
            await watcher.until { ExportFixtures.json($0[self.topics.state(relay)] ?? [])["state"] as? String == "ON" }
        }
    }

    @Test func aBrokerThatStartsLateGetsEverythingOnceItIsUp() async throws {
        let port = try MosquittoBroker.freeLoopbackPort()
        let (core, _) = ExportFixtures.core()
        let settings = try ExposureSettings(store: nil)
        let log = LogCapture()
        let (_, run) = start(core, settings: settings, port: port, logger: Logger(label: "test.export") { _ in log })
        defer { run.cancel() }
        // The exporter has tried and failed (nothing listens yet), and said so.
        try await within(20, "the exporter's first attempt failed") {
            while !log.contains("cannot be reached") { try await Task.sleep(for: .milliseconds(20)) }
        }
        let broker = try await MosquittoBroker(port: port)
        defer { broker.stop() }
        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/#", "hearth/#"])
        defer { watcher.stop() }
        let relayConfig = topics.config("switch", "\(ExportTopics.slug("gpio:relay"))_onoff")
        let thermo = ExportTopics.slug("gpio:thermo")
        // The exporter retries with backoff (1 s, doubling, at most 30 s).
        do {
            try await within(40, "every config, state and the bridge online after the broker came up") {
                await watcher.until {
                    $0[relayConfig] != nil && $0[self.topics.state(thermo)] != nil && $0[self.topics.bridgeAvailability] == Array("online".utf8)
                }
            }
        } catch {
            Issue.record("the exporter said: \(log.lines.withLock { $0.joined(separator: "\n") })")
            throw error
        }
        #expect(log.contains("connected to the MQTT broker"))
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
        // Read-only: a command for the lamp is refused by the exporter (and the door's grant would refuse it too).
        let lamp = ExportTopics.slug("gpio:lamp")
        try await broker.mosquittoPub(topics.command(lamp, "light"), #"{"state":"OFF"}"#)
        try await within(20, "the refusal counted") {
            while exporter.refusedCommands < 1 { try await Task.sleep(for: .milliseconds(20)) }
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

/// A log handler that keeps every message (to wait for what the exporter says).
final class LogCapture: LogHandler, @unchecked Sendable {
    // @unchecked: the only state is the Mutex; metadata and level are fixed.
    let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    subscript(metadataKey _: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }
    func log(event: LogEvent) {
        lines.withLock { $0.append("\(event.message) \(event.metadata ?? [:])") }
    }
    func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
}
