/// MQTT's rules for topic names and topic filters (MQTT 3.1.1 §4.7, §1.5.3), checked before a
/// topic reaches libmosquitto: a topic the broker refuses makes it drop the whole connection.
enum MQTTTopic {
    /// The longest topic MQTT can carry: its length is a 16-bit prefix.
    static let maximumBytes = 65_535

    enum Use {
        /// A topic filter for SUBSCRIBE: `+` and `#` allowed as whole levels (`#` last).
        case subscribe
        /// A topic name for PUBLISH: no wildcards.
        case publish
    }

    /// Why `topic` is not a valid topic for `use`; nil when it is.
    ///
    /// Refused: an empty topic, more than 65,535 bytes of UTF-8, U+0000, the control characters
    /// U+0001…U+001F and U+007F…U+009F and the non-characters U+xFFFE/U+xFFFF (which mosquitto
    /// refuses as malformed UTF-8), wildcards in a published topic, and `+`/`#` that do not
    /// fill a whole level (or a `#` that is not last) in a filter.
    static func problem(_ topic: String, _ use: Use) -> String? {
        if topic.isEmpty { return "is empty" }
        if topic.utf8.count > maximumBytes { return "is longer than \(maximumBytes) bytes" }
        for scalar in topic.unicodeScalars {
            let v = scalar.value
            if v == 0 { return "contains U+0000 (NUL)" }
            if v < 0x20 || (0x7F...0x9F).contains(v) {
                return "contains the control character U+\(String(v, radix: 16, uppercase: true).leftPadded(to: 4))"
            }
            if v & 0xFFFE == 0xFFFE || (0xFDD0...0xFDEF).contains(v) {
                return "contains the non-character U+\(String(v, radix: 16, uppercase: true).leftPadded(to: 4))"
            }
        }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        switch use {
        case .publish:
            if topic.contains("+") || topic.contains("#") { return "contains a wildcard ('+' or '#'), which a published topic may not" }
        case .subscribe:
            for (i, level) in levels.enumerated() {
                if level.contains("#"), level != "#" || i != levels.count - 1 {
                    return "has a '#' that is not the whole last level"
                }
                if level.contains("+"), level != "+" { return "has a '+' that is not a whole level" }
            }
        }
        return nil
    }

    /// Whether a topic name matches a topic filter (MQTT 3.1.1 §4.7.1; `$`-topics are not matched
    /// by a filter starting with a wildcard).
    static func matches(filter: String, topic: String) -> Bool {
        let f = filter.split(separator: "/", omittingEmptySubsequences: false)
        let t = topic.split(separator: "/", omittingEmptySubsequences: false)
        if topic.hasPrefix("$"), let first = f.first, first == "+" || first == "#" { return false }
        var i = 0
        while i < f.count {
            if f[i] == "#" { return true }
            guard i < t.count else { return false }
            if f[i] != "+", f[i] != t[i] { return false }
            i += 1
        }
        return i == t.count
    }

    static func hasWildcard(_ filter: String) -> Bool { filter.contains("+") || filter.contains("#") }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
