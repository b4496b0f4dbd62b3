import HomeModel
import Foundation

extension HearthConfig {
    /// `hap:` in hearth.yaml: the HomeKit (HAP) bridge. Off unless `enabled: true`; the devices it
    /// shows are `exposure.devices`, shared with the other doors.
    ///
    /// ```yaml
    /// hap:
    ///   enabled: true
    ///   listen: 0.0.0.0:51826
    ///   name: Hearth
    ///   setupCode: 031-45-154      # optional; a random one is generated and kept otherwise
    ///   advertise: true            # _hap._tcp through avahi
    ///   state: /var/lib/hearth/hap.sqlite   # default: beside the database
    /// ```
    public struct HAP: Sendable, Equatable {
        public var enabled = false
        public var host = "0.0.0.0"
        public var port = 51826
        public var name = "Hearth"
        public var setupCode: String?
        public var advertise = true
        /// As written (made absolute); nil: `hap.sqlite` beside the database.
        public var state: String?

        public init() {}

        public static let keys = ["advertise", "enabled", "listen", "name", "setupCode", "state"]

        static func parse(_ value: Value, baseDir: String, problem: (String, String) -> HomeError) throws(HomeError) -> HAP {
            var hap = HAP()
            if value.isNull { return hap }
            guard let map = value.objectValue else { throw problem("hap", "expected a mapping (enabled, listen, name, setupCode, advertise, state)") }
            for key in map.keys.sorted() where !keys.contains(key) {
                throw problem("hap.\(key)", "unknown key (known: \(keys.joined(separator: ", ")))")
            }
            for (key, path) in [("enabled", \HAP.enabled), ("advertise", \HAP.advertise)] {
                guard let v = map[key], !v.isNull else { continue }
                guard let b = v.boolValue else { throw problem("hap.\(key)", "expected true or false") }
                hap[keyPath: path] = b
            }
            if let l = map["listen"], !l.isNull {
                guard let s = l.stringValue, let (host, port) = HearthConfig.parseListen(s) else {
                    throw problem("hap.listen", "expected host:port, e.g. 0.0.0.0:51826")
                }
                (hap.host, hap.port) = (host, port)
            }
            if let n = map["name"], !n.isNull {
                guard let s = n.stringValue, !s.isEmpty, s.count <= 64 else { throw problem("hap.name", "expected a name of 1 to 64 characters") }
                hap.name = s
            }
            if let c = map["setupCode"], !c.isNull {
                guard let s = c.stringValue, s.count == 10, s.filter(\.isNumber).count == 8, Array(s)[3] == "-", Array(s)[6] == "-" else {
                    throw problem("hap.setupCode", "expected XXX-XX-XXX digits, e.g. 031-45-154")
                }
                hap.setupCode = s
            }
            if let p = map["state"], !p.isNull {
                guard let s = p.stringValue, !s.isEmpty else { throw problem("hap.state", "expected a file path") }
                hap.state = s.hasPrefix("/") ? s : (baseDir as NSString).appendingPathComponent(s)
            }
            return hap
        }
    }

    /// Where the HAP bridge keeps its keys and pairings.
    public var hapStatePath: String {
        hap.state ?? ((databasePath as NSString).deletingLastPathComponent as NSString).appendingPathComponent("hap.sqlite")
    }
}
