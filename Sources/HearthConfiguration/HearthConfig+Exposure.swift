import Foundation
import HomeModel

extension HearthConfig {
    /// `exposure:` in hearth.yaml: which devices leave the house (every door) and the doors
    /// that are on. Everything is off by default.
    ///
    /// ```yaml
    /// exposure:
    ///   devices:                  # all non-sensitive devices when nothing is listed
    ///     rooms: [Garage]         # room names or IDs
    ///     deviceTypes: [OnOffLight, "0x0302"]
    ///     ids: ["gpio:relay"]     # listing a lock here opts it in
    ///     exclude: { rooms: [], deviceTypes: [], ids: [] }
    ///     includeSensitive: false
    ///     allowControl: true
    ///   mqtt:
    ///     broker: 127.0.0.1:1883
    ///     prefix: homeassistant
    /// ```
    public struct Exposure: Sendable, Equatable {
        /// The selection as written (names are resolved against the layout by hearthd).
        public struct Selection: Sendable, Equatable {
            public var rooms: [String] = []
            public var deviceTypes: [String] = []
            public var ids: [String] = []
            public var excludedRooms: [String] = []
            public var excludedDeviceTypes: [String] = []
            public var excludedIDs: [String] = []
            public var includeSensitive = false
            public var allowControl = true
            public init() {}
        }

        /// `exposure.mqtt`: Home Assistant MQTT discovery.
        public struct MQTT: Sendable, Equatable {
            public var host = "127.0.0.1"
            public var port = 1883
            /// HA's discovery prefix.
            public var prefix = "homeassistant"
            /// This Hearth's node ID in topics and unique IDs (default: `hearth_<hostname>`).
            public var nodeID: String
            /// Where state and command topics live (default: `hearth/<nodeID>`).
            public var baseTopic: String
            public var username: String?
            public var password: String?
            public var clientID: String?
            public var keepAlive = 30
            /// Export devices this Hearth imported from MQTT too (off: no loops).
            public var reexportImported = false
            /// Plugins whose devices came from MQTT (never re-exported unless asked).
            public var importPlugins: [String] = ["mqtt"]

            public init(nodeID: String) {
                self.nodeID = nodeID
                baseTopic = "hearth/\(nodeID)"
            }
        }

        public var devices = Selection()
        public var mqtt: MQTT?

        public init() {}

        public static let keys = ["devices", "mqtt"]
        static let selectionKeys = ["allowControl", "deviceTypes", "exclude", "ids", "includeSensitive", "rooms"]
        static let mqttKeys = [
            "broker", "clientID", "enabled", "importPlugins", "keepAlive", "nodeID", "password", "prefix", "reexportImported",
            "baseTopic", "username",
        ]

        /// A node ID from the host name: lower-case letters, digits and `_` only.
        public static func defaultNodeID(hostName: String? = nil) -> String {
            let hostName = hostName ?? ProcessInfo.processInfo.hostName
            let cleaned = String(hostName.lowercased().map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII ? $0 : "_" })
            return "hearth_" + (cleaned.isEmpty ? "home" : cleaned)
        }

        /// Whether a topic segment is safe: no wildcards, no `/`, not empty.
        static func isTopicSegment(_ s: String) -> Bool {
            !s.isEmpty && s.utf8.count <= 64 && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        }

        static func parse(_ value: Value, problem: (String, String) -> HomeError) throws(HomeError) -> Exposure {
            var exposure = Exposure()
            if value.isNull { return exposure }
            guard let map = value.objectValue else { throw problem("exposure", "expected a mapping with 'devices' and/or 'mqtt'") }
            for key in map.keys.sorted() where !keys.contains(key) {
                throw problem("exposure.\(key)", "unknown key (known: \(keys.joined(separator: ", ")))")
            }
            if let d = map["devices"], !d.isNull {
                guard let sel = d.objectValue else { throw problem("exposure.devices", "expected a mapping (rooms, deviceTypes, ids, exclude, includeSensitive, allowControl)") }
                for key in sel.keys.sorted() where !selectionKeys.contains(key) {
                    throw problem("exposure.devices.\(key)", "unknown key (known: \(selectionKeys.joined(separator: ", ")))")
                }
                func strings(_ v: Value?, _ path: String) throws(HomeError) -> [String] {
                    guard let v, !v.isNull else { return [] }
                    if let list = v.listValue {
                        var out: [String] = []
                        for item in list {
                            guard let s = item.stringValue ?? item.intValue.map({ String($0) }) else { throw problem(path, "expected a list of names") }
                            out.append(s)
                        }
                        return out
                    }
                    throw problem(path, "expected a list, e.g. [Garage, Hall]")
                }
                exposure.devices.rooms = try strings(sel["rooms"], "exposure.devices.rooms")
                exposure.devices.deviceTypes = try strings(sel["deviceTypes"], "exposure.devices.deviceTypes")
                exposure.devices.ids = try strings(sel["ids"], "exposure.devices.ids")
                if let ex = sel["exclude"], !ex.isNull {
                    guard let exMap = ex.objectValue else { throw problem("exposure.devices.exclude", "expected a mapping with rooms, deviceTypes and/or ids") }
                    for key in exMap.keys.sorted() where !["deviceTypes", "ids", "rooms"].contains(key) {
                        throw problem("exposure.devices.exclude.\(key)", "unknown key (known: deviceTypes, ids, rooms)")
                    }
                    exposure.devices.excludedRooms = try strings(exMap["rooms"], "exposure.devices.exclude.rooms")
                    exposure.devices.excludedDeviceTypes = try strings(exMap["deviceTypes"], "exposure.devices.exclude.deviceTypes")
                    exposure.devices.excludedIDs = try strings(exMap["ids"], "exposure.devices.exclude.ids")
                }
                for (key, path) in [("includeSensitive", \Selection.includeSensitive), ("allowControl", \Selection.allowControl)] {
                    guard let v = sel[key] else { continue }
                    guard let b = v.boolValue else { throw problem("exposure.devices.\(key)", "expected true or false") }
                    exposure.devices[keyPath: path] = b
                }
            }
            if let m = map["mqtt"], !m.isNull {
                guard let mm = m.objectValue else { throw problem("exposure.mqtt", "expected a mapping with 'broker' (e.g. broker: 127.0.0.1:1883)") }
                for key in mm.keys.sorted() where !mqttKeys.contains(key) {
                    throw problem("exposure.mqtt.\(key)", "unknown key (known: \(mqttKeys.sorted().joined(separator: ", ")))")
                }
                if let e = mm["enabled"] {
                    guard let b = e.boolValue else { throw problem("exposure.mqtt.enabled", "expected true or false") }
                    if !b { return exposure }
                }
                var nodeID = defaultNodeID()
                if let n = mm["nodeID"] {
                    guard let s = n.stringValue, isTopicSegment(s) else {
                        throw problem("exposure.mqtt.nodeID", "expected letters, digits, '_' or '-' (at most 64), e.g. hearth_garage")
                    }
                    nodeID = s
                }
                var mqtt = MQTT(nodeID: nodeID)
                if let b = mm["broker"] {
                    guard let text = b.stringValue, let (host, port) = HearthConfig.parseListen(text) else {
                        throw problem("exposure.mqtt.broker", "expected host:port, e.g. 127.0.0.1:1883")
                    }
                    (mqtt.host, mqtt.port) = (host, port)
                }
                if let p = mm["prefix"] {
                    guard let s = p.stringValue, !s.isEmpty, !s.contains("+"), !s.contains("#"), !s.hasPrefix("/"), !s.hasSuffix("/") else {
                        throw problem("exposure.mqtt.prefix", "expected a topic prefix without wildcards, e.g. homeassistant")
                    }
                    mqtt.prefix = s
                }
                if let t = mm["baseTopic"] {
                    guard let s = t.stringValue, !s.isEmpty, !s.contains("+"), !s.contains("#"), !s.hasSuffix("/") else {
                        throw problem("exposure.mqtt.baseTopic", "expected a topic without wildcards, e.g. hearth/garage")
                    }
                    mqtt.baseTopic = s
                }
                for (key, path) in [("username", \MQTT.username), ("password", \MQTT.password), ("clientID", \MQTT.clientID)] {
                    guard let v = mm[key] else { continue }
                    guard let s = v.stringValue else { throw problem("exposure.mqtt.\(key)", "expected text") }
                    mqtt[keyPath: path] = s
                }
                if let k = mm["keepAlive"] {
                    guard let n = k.intValue, (5...3600).contains(n) else { throw problem("exposure.mqtt.keepAlive", "expected seconds from 5 to 3600") }
                    mqtt.keepAlive = Int(n)
                }
                if let r = mm["reexportImported"] {
                    guard let b = r.boolValue else { throw problem("exposure.mqtt.reexportImported", "expected true or false") }
                    mqtt.reexportImported = b
                }
                if let list = mm["importPlugins"] {
                    guard let l = list.listValue, l.allSatisfy({ $0.stringValue != nil }) else {
                        throw problem("exposure.mqtt.importPlugins", "expected a list of plugin IDs, e.g. [mqtt]")
                    }
                    mqtt.importPlugins = l.compactMap(\.stringValue)
                }
                exposure.mqtt = mqtt
            }
            return exposure
        }
    }
}
