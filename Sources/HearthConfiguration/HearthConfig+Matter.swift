import Foundation
import HomeModel

extension HearthConfig {
    /// `matter:` in hearth.yaml: the Matter bridge. Off unless `enabled: true`.
    ///
    /// ```yaml
    /// matter:
    ///   enabled: true
    ///   port: 5540                 # UDP, IPv6 and IPv4
    ///   name: Hearth               # the commissionable record's DN, Basic Information's ProductName
    ///   advertise: true            # _matterc._udp / _matter._tcp through avahi
    ///   state: /var/lib/hearth/matter.sqlite   # fabrics, keys, ACL (0600); default: beside the database
    /// ```
    public struct Matter: Sendable, Equatable {
        public var enabled = false
        public var port = 5540
        public var name = "Hearth"
        public var advertise = true
        /// As written (made absolute); nil: `matter.sqlite` beside the database.
        public var state: String?

        public init() {}

        public static let keys = ["advertise", "enabled", "name", "port", "state"]

        static func parse(_ value: Value, baseDir: String, problem: (String, String) -> HomeError) throws(HomeError) -> Matter {
            var matter = Matter()
            if value.isNull { return matter }
            guard let map = value.objectValue else { throw problem("matter", "expected a mapping (enabled, port, name, advertise, state)") }
            for key in map.keys.sorted() where !keys.contains(key) {
                throw problem("matter.\(key)", "unknown key (known: \(keys.joined(separator: ", ")))")
            }
            for (key, path) in [("enabled", \Matter.enabled), ("advertise", \Matter.advertise)] {
                guard let v = map[key], !v.isNull else { continue }
                guard let b = v.boolValue else { throw problem("matter.\(key)", "expected true or false") }
                matter[keyPath: path] = b
            }
            if let p = map["port"], !p.isNull {
                guard let n = p.intValue, (0...65535).contains(n) else { throw problem("matter.port", "expected a UDP port (0 to 65535)") }
                matter.port = Int(n)
            }
            if let n = map["name"], !n.isNull {
                guard let s = n.stringValue, !s.isEmpty, s.utf8.count <= 32 else { throw problem("matter.name", "expected a name of 1 to 32 bytes") }
                matter.name = s
            }
            if let p = map["state"], !p.isNull {
                guard let s = p.stringValue, !s.isEmpty else { throw problem("matter.state", "expected a file path") }
                matter.state = s.hasPrefix("/") ? s : (baseDir as NSString).appendingPathComponent(s)
            }
            return matter
        }
    }

    /// Where the Matter bridge keeps its fabrics, keys and pairing code.
    public var matterStatePath: String {
        matter.state ?? ((databasePath as NSString).deletingLastPathComponent as NSString).appendingPathComponent("matter.sqlite")
    }
}
