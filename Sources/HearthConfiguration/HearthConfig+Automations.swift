public import HomeModel
import Foundation

extension HearthConfig {
    /// `scenes:` and `automations:` as read (values with the line of every key path, for
    /// `file:line: key: message` errors), and `location:` (the time zone of time starters).
    public struct HomeSection: Sendable {
        public var scenes: Value?
        public var automations: Value?
        /// IANA time zone (`Europe/Amsterdam`); nil: the system's.
        public var timeZone: String?
        public var latitude: Double?
        public var longitude: Double?
        /// Lines by key path from the file's root (`automations[0].starters[1]` → 31).
        public var lines: [String: Int] = [:]

        public init() {}

        static func parse(_ top: [String: Value], file: String, lines: [String: Int], problem: (String, String) -> HomeError) throws(HomeError)
            -> HomeSection
        {
            var s = HomeSection()
            s.scenes = top["scenes"]
            s.automations = top["automations"]
            s.lines = lines.filter { $0.key.hasPrefix("scenes") || $0.key.hasPrefix("automations") }
            if let location = top["location"] {
                guard let o = location.objectValue else { throw problem("location", "expected a mapping with latitude, longitude, timezone") }
                for key in o.keys.sorted() where !["latitude", "longitude", "timezone"].contains(key) {
                    throw problem("location.\(key)", "unknown key (known: latitude, longitude, timezone)")
                }
                if let tz = o["timezone"] {
                    guard let name = tz.stringValue, TimeZone(identifier: name) != nil else {
                        throw problem("location.timezone", "not a time zone name (e.g. Europe/Amsterdam)")
                    }
                    s.timeZone = name
                }
                if let v = o["latitude"] {
                    guard let x = v.doubleValue, (-90...90).contains(x) else { throw problem("location.latitude", "expected degrees from -90 to 90") }
                    s.latitude = x
                }
                if let v = o["longitude"] {
                    guard let x = v.doubleValue, (-180...180).contains(x) else { throw problem("location.longitude", "expected degrees from -180 to 180") }
                    s.longitude = x
                }
            }
            return s
        }
    }
}
