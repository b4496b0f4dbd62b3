import Foundation
import TestSupport
import Testing

/// Issue #10: a log line about a plugin carries `plugin`, one about a device carries `device`
/// too — from the real hearthd, its MQTT plugin and a real mosquitto.
@Suite struct LogFieldsTests {
    /// The line as a JSON object (`log.format: json`), or nil if it is not one.
    static func object(_ line: String) -> [String: String]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String]
    }

    @Test func malformed_mqtt_payload_line_names_plugin_device_and_topic() async throws {
        let broker = try await MosquittoBroker()
        let dir = try Scratch("hearth-logfields")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: buildDirectory + "/libMQTTPlugin.so", toPath: dir.at("plugins/libMQTTPlugin.so"))
        try """
            log:
              level: debug
              format: json
            storage:
              database: \(dir.at("hearth.sqlite"))
            plugins:
              directories: [\(dir.at("plugins"))]
              mqtt:
                broker: { host: 127.0.0.1, port: \(broker.port), clientID: hearth-logfields }
                discovery: { enabled: false }
                devices:
                  - id: greenhouse
                    deviceType: Temperature Sensor
                    attributes:
                      - { trait: Temperature Measurement, attribute: MeasuredValue, topic: greenhouse/temp }
            """.write(toFile: dir.at("hearth.yaml"), atomically: true, encoding: .utf8)
        let daemon = try Daemon(config: dir.at("hearth.yaml"), in: dir.path)
        defer { daemon.stop() }

        // The subscription is live once the broker acknowledged it (a debug line of the plugin's).
        let subscribed = try await within(30, "the MQTT plugin to subscribe to greenhouse/temp") {
            await daemon.line { Self.object($0)?["msg"] == "subscribed to greenhouse/temp" }
        }
        let subscribedLine = try #require(subscribed.flatMap(Self.object), "hearthd ended early:\n\(daemon.lines.joined(separator: "\n"))")
        #expect(subscribedLine["plugin"] == "mqtt")
        #expect(subscribedLine["device"] == nil, "a topic is not a device")

        try await broker.mosquittoPub("greenhouse/temp", "warm")
        let refused = try await within(30, "the refused-payload line") {
            await daemon.line { Self.object($0)?["msg"]?.contains("refused payload") == true }
        }
        let line = try #require(refused.flatMap(Self.object), "no refused-payload line in:\n\(daemon.lines.joined(separator: "\n"))")
        #expect(line["plugin"] == "mqtt")
        #expect(line["device"] == "mqtt:greenhouse")
        #expect(line["level"] == "warning")
        #expect(line["msg"]?.contains("greenhouse/temp") == true, "the line names the topic")
    }
}
