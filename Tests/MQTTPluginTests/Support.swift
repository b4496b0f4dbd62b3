import Foundation
import HomeModel
import Testing
@testable import MQTTPlugin

/// A plain MQTT client (the plugin's own libmosquitto wrapper) playing a device: it publishes
/// state and records what it receives.
final class DeviceClient: Sendable {
    let connection: MQTTConnection
    let received: AsyncStream<(topic: String, payload: String)>
    let connected: AsyncStream<Void>

    init(port: Int, id: String = "device-\(UUID().uuidString.prefix(8))") throws {
        let (received, receivedContinuation) = AsyncStream<(topic: String, payload: String)>.makeStream()
        let (connected, connectedContinuation) = AsyncStream<Void>.makeStream()
        self.received = received
        self.connected = connected
        var handlers = MQTTConnection.Handlers()
        handlers.connected = { connectedContinuation.yield() }
        handlers.message = { topic, payload, _ in
            receivedContinuation.yield((topic, String(decoding: payload, as: UTF8.self)))
        }
        connection = try MQTTConnection(options: .init(host: "127.0.0.1", port: port, clientID: id), handlers: handlers)
    }

    /// Connects and waits for the broker's acknowledgement.
    func start() async throws {
        try connection.start()
        for await _ in connected { return }
    }

    /// Subscribes and waits until the subscription is live (a probe message comes back).
    func subscribe(_ topic: String) async throws {
        try connection.subscribe(topic, qos: 1)
        let probe = "hearth-probe-\(UUID().uuidString)"
        try connection.publish(topic, payload: probe, qos: 1)
        for await message in received where message.payload == probe { return }
    }

    /// The next message on `topic` (other topics are skipped).
    func next(on topic: String) async -> String? {
        for await message in received where message.topic == topic { return message.payload }
        return nil
    }

    func publish(_ topic: String, _ payload: String, retain: Bool = false) throws {
        try connection.publish(topic, payload: payload, qos: 1, retain: retain)
    }

    func stop() { connection.stop() }

    /// A connected device playing BrokerIntegrationTests' plug: subscribed to `acme/plug/set`,
    /// with its availability (`online`), state (`OFF`) and discovery config retained.
    static func retainedPlug(port: Int) async throws -> DeviceClient {
        let device = try DeviceClient(port: port)
        try await device.start()
        try await device.subscribe("acme/plug/set")
        try device.publish("acme/plug/availability", "online", retain: true)
        try device.publish("acme/plug/state", "OFF", retain: true)
        try device.publish("homeassistant/switch/plug/config", BrokerIntegrationTests.plug, retain: true)
        return device
    }
}

/// A vendor's discovery and state messages, written from its public documentation.
struct Fixture {
    struct Item {
        let topic: String
        let payload: String
    }

    let discovery: [Item]
    let states: [Item]

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    init(_ name: String) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(name + ".json"))
        let json = try JSONParser.parse(String(decoding: data, as: UTF8.self))
        func items(_ key: String) -> [Item] {
            (json[key]?.listValue ?? []).map { item in
                let payload = item["payload"] ?? .null
                return Item(topic: item["topic"]?.stringValue ?? "", payload: payload.stringValue ?? payload.jsonText)
            }
        }
        discovery = items("discovery")
        states = items("states")
    }

    static var all: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }
}
