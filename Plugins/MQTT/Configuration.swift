import DriverAPI
import Foundation
import HomeModel

/// The plugin's section of `hearth.yaml` (`plugins.mqtt`).
///
/// ```yaml
/// plugins:
///   mqtt:
///     broker: { host: 127.0.0.1, port: 1883, clientID: hearth }
///     discovery: { enabled: true, prefix: homeassistant }
///     devices:
///       - id: boiler
///         name: Boiler
///         room: Utility
///         deviceType: On/Off Plug-in Unit
///         attributes:
///           - { trait: On/Off, attribute: OnOff, topic: stat/boiler/POWER, map: { "ON": true, "OFF": false } }
///         commands:
///           - { trait: On/Off, command: On, topic: cmnd/boiler/POWER, payload: "ON" }
///           - { trait: On/Off, command: Off, topic: cmnd/boiler/POWER, payload: "OFF" }
/// ```
struct MQTTConfiguration: Decodable, Sendable {
    struct Broker: Decodable, Sendable {
        var host: String?
        var port: Int?
        var clientID: String?
        var username: String?
        var password: String?
        /// Turns on TLS, trusting this CA file (PEM).
        var caFile: String?
        var certFile: String?
        var keyFile: String?
        /// Seconds between keepalive pings (5…65535).
        var keepalive: Int?
        var reconnect: Reconnect?
        /// Seconds a command waits for the broker's acknowledgement before it fails with
        /// `timeout` (0.1…300, default 5). A command that timed out is dropped, never retried.
        var commandTimeout: Double?
    }

    struct Reconnect: Decodable, Sendable {
        /// Seconds before the first reconnection attempt (doubling up to `maximumDelay`).
        var minimumDelay: Int?
        var maximumDelay: Int?
    }

    struct DiscoverySettings: Decodable, Sendable {
        var enabled: Bool?
        var prefix: String?
        /// Node IDs (the `<node_id>` of `<prefix>/<component>/<node_id>/<object_id>/config`)
        /// skipped: hearthd adds its own MQTT export's, so a Hearth never imports itself.
        var ignoreNodes: [String]?
        /// Discovered devices and entities kept at most (default 1024 and 4096); beyond them a
        /// discovery message is refused. Raise them for a house that imports more (several
        /// exporting Hearths).
        var maximumDevices: Int?
        var maximumEntities: Int?
    }

    var broker: Broker?
    var discovery: DiscoverySettings?
    /// Payloads larger than this many bytes are refused (default 262144).
    var maximumPayloadBytes: Int?
    /// Devices that announce nothing, mapped by hand.
    var devices: [ExplicitDevice]?

    var connectionOptions: MQTTConnection.Options {
        var o = MQTTConnection.Options(host: broker?.host ?? "127.0.0.1", port: broker?.port ?? 1883, clientID: broker?.clientID)
        o.username = broker?.username
        o.password = broker?.password
        o.caFile = broker?.caFile
        o.certFile = broker?.certFile
        o.keyFile = broker?.keyFile
        o.keepalive = broker?.keepalive ?? 60
        o.reconnectDelay = (broker?.reconnect?.minimumDelay ?? 1, broker?.reconnect?.maximumDelay ?? 30)
        return o
    }

    var registrySettings: Registry.Settings {
        var s = Registry.Settings()
        s.discoveryPrefix = (discovery?.enabled ?? true) ? (discovery?.prefix ?? "homeassistant") : nil
        s.maximumPayloadBytes = maximumPayloadBytes ?? 256 * 1024
        s.ignoredNodes = Set(discovery?.ignoreNodes ?? [])
        s.maximumDevices = discovery?.maximumDevices ?? s.maximumDevices
        s.maximumEntities = discovery?.maximumEntities ?? s.maximumEntities
        return s
    }

    /// Checks what decoding cannot, naming the key and line of each problem.
    func check(_ configuration: PluginConfiguration) throws(HomeError) {
        if let port = broker?.port, !(1...65535).contains(port) {
            throw .invalidArgument(configuration.problem(at: "broker.port", "must be between 1 and 65535, not \(port)"))
        }
        if let t = broker?.commandTimeout, !(0.1...300).contains(t) {
            throw .invalidArgument(configuration.problem(at: "broker.commandTimeout", "must be between 0.1 and 300 seconds, not \(t)"))
        }
        if let k = broker?.keepalive, !(5...65535).contains(k) {
            throw .invalidArgument(configuration.problem(at: "broker.keepalive", "must be between 5 and 65535 seconds, not \(k)"))
        }
        for (key, path) in [("caFile", broker?.caFile), ("certFile", broker?.certFile), ("keyFile", broker?.keyFile)] {
            guard let path else { continue }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw .invalidArgument(configuration.problem(at: "broker.\(key)", "cannot read \(path) (missing, or no permission)"))
            }
        }
        if (broker?.certFile == nil) != (broker?.keyFile == nil) {
            throw .invalidArgument(configuration.problem(at: "broker", "certFile and keyFile go together"))
        }
        if let r = broker?.reconnect {
            let lo = r.minimumDelay ?? 1
            let hi = r.maximumDelay ?? 30
            guard lo >= 1, hi >= lo, hi <= 3600 else {
                throw .invalidArgument(configuration.problem(at: "broker.reconnect", "needs 1 ≤ minimumDelay ≤ maximumDelay ≤ 3600 seconds"))
            }
        }
        if let prefix = discovery?.prefix, prefix.hasSuffix("/") || MQTTTopic.problem(prefix, .publish) != nil {
            throw .invalidArgument(configuration.problem(at: "discovery.prefix", "must be a topic without wildcards or a trailing '/', like homeassistant"))
        }
        for (key, value) in [("maximumDevices", discovery?.maximumDevices), ("maximumEntities", discovery?.maximumEntities)] {
            if let value, !(1...1_000_000).contains(value) {
                throw .invalidArgument(configuration.problem(at: "discovery.\(key)", "must be between 1 and 1000000, not \(value)"))
            }
        }
        if let m = maximumPayloadBytes, !(64...(16 * 1024 * 1024)).contains(m) {
            throw .invalidArgument(configuration.problem(at: "maximumPayloadBytes", "must be between 64 and 16777216"))
        }
        var seen: Set<String> = []
        for (i, device) in (devices ?? []).enumerated() {
            guard seen.insert(device.id).inserted else {
                throw .invalidArgument(configuration.problem(at: "devices[\(i)].id", "'\(device.id)' is used twice"))
            }
            _ = try device.entity(path: "devices[\(i)]", configuration: configuration, catalog: .standard)
        }
    }
}
