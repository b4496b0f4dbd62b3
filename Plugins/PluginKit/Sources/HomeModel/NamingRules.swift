/// The naming rules for structures, rooms and devices (after HomeKit's setup guidance):
/// letters, digits, spaces and apostrophes; start and end with a letter or digit; no emoji;
/// a device name that repeats its room ("Kitchen Light" in the Kitchen) is accepted with a
/// warning and a suggested alternative ("Light").
public enum NamingRules {
    /// The longest name accepted, in characters.
    public static let maximumLength = 64

    /// One rule a name broke.
    public enum Violation: String, Hashable, Sendable, Codable {
        case empty
        case tooLong
        case invalidCharacter
        case emoji
        case mustStartWithLetterOrDigit
        case mustEndWithLetterOrDigit

        /// The rule in words.
        public var rule: String {
            switch self {
            case .empty: "a name may not be empty"
            case .tooLong: "a name may have at most \(NamingRules.maximumLength) characters"
            case .invalidCharacter: "a name may contain only letters, digits, spaces and apostrophes"
            case .emoji: "a name may not contain emoji"
            case .mustStartWithLetterOrDigit: "a name must start with a letter or a digit"
            case .mustEndWithLetterOrDigit: "a name must end with a letter or a digit"
            }
        }
    }

    /// The verdict on a proposed name.
    public struct Verdict: Hashable, Sendable, Codable {
        /// The name as it would be stored (white space trimmed and collapsed).
        public let name: String
        /// Rules the name breaks; empty when it is valid.
        public let violations: [Violation]
        /// A warning that does not block the name (it repeats its room).
        public let warning: String?
        /// Valid alternatives to offer the person.
        public let suggestions: [String]

        public var isValid: Bool { violations.isEmpty }
    }

    /// Judges a name, optionally for a device in a room called `roomName`.
    public static func check(_ proposed: String, roomName: String? = nil) -> Verdict {
        let name = collapseSpaces(proposed)
        var violations: [Violation] = []
        if name.isEmpty {
            violations.append(.empty)
        } else {
            if name.count > maximumLength { violations.append(.tooLong) }
            if name.unicodeScalars.contains(where: isEmoji) { violations.append(.emoji) }
            if name.contains(where: { !isAllowed($0) && !$0.unicodeScalars.contains(where: isEmoji) }) {
                violations.append(.invalidCharacter)
            }
            if let first = name.first, !isLetterOrDigit(first) { violations.append(.mustStartWithLetterOrDigit) }
            if let last = name.last, !isLetterOrDigit(last) { violations.append(.mustEndWithLetterOrDigit) }
        }
        var suggestions: [String] = []
        var warning: String?
        if !violations.isEmpty {
            let repaired = repair(name)
            if !repaired.isEmpty, repaired != name { suggestions.append(repaired) }
        }
        if let roomName, violations.isEmpty, let shorter = withoutRoom(name, room: roomName) {
            warning = "'\(name)' repeats its room '\(collapseSpaces(roomName))'; devices are shown with their room already"
            suggestions.append(shorter)
        }
        return Verdict(name: name, violations: violations, warning: warning, suggestions: suggestions)
    }

    /// Validates a name and returns it as stored.
    ///
    /// - Throws: ``HomeError`` `invalidArgument` naming the broken rule and a suggestion.
    public static func validate(_ proposed: String, what: String = "name") throws(HomeError) -> String {
        let verdict = check(proposed)
        guard verdict.isValid else {
            var message = "invalid \(what) '\(proposed)': " + verdict.violations.map(\.rule).joined(separator: "; ")
            if let s = verdict.suggestions.first { message += " (try '\(s)')" }
            throw .invalidArgument(message)
        }
        return verdict.name
    }

    /// The key under which names must be unique: case-, space- and apostrophe-insensitive.
    public static func normalised(_ name: String) -> String {
        collapseSpaces(name).lowercased().filter { $0 != "'" && $0 != "’" }
    }

    // MARK: - Character classes

    static func isLetterOrDigit(_ c: Character) -> Bool {
        c.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil }
            && !c.unicodeScalars.contains(where: isEmoji)
    }

    static func isAllowed(_ c: Character) -> Bool {
        c == " " || c == "'" || c == "’" || isLetterOrDigit(c)
    }

    static func isEmoji(_ s: Unicode.Scalar) -> Bool {
        let p = s.properties
        // Digits, '#' and '*' carry the Emoji property for keycaps; only count them as emoji
        // when they are presented as such.
        if s.isASCII { return false }
        return p.isEmojiPresentation || (p.isEmoji && s.value > 0xFF) || s.value == 0xFE0F || s.value == 0x200D
    }

    static func collapseSpaces(_ s: String) -> String {
        s.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// Drops what breaks the rules: emoji and other characters, then leading and trailing
    /// characters that are not letters or digits.
    static func repair(_ name: String) -> String {
        var kept = String(name.map { isAllowed($0) ? $0 : " " })
        kept = collapseSpaces(kept)
        while let f = kept.first, !isLetterOrDigit(f) { kept.removeFirst() }
        while let l = kept.last, !isLetterOrDigit(l) { kept.removeLast() }
        return String(kept.prefix(maximumLength)).trimmingSpaces()
    }

    /// The name without its room's words, if it contains them and something remains.
    static func withoutRoom(_ name: String, room: String) -> String? {
        let roomWords = collapseSpaces(room).lowercased().split(separator: " ")
        guard !roomWords.isEmpty else { return nil }
        let words = name.split(separator: " ")
        let lower = words.map { $0.lowercased() }
        for start in 0...max(0, lower.count - roomWords.count) where start + roomWords.count <= lower.count {
            if Array(lower[start..<start + roomWords.count]).elementsEqual(roomWords.map(String.init)) {
                let rest = words[..<start] + words[(start + roomWords.count)...]
                let suggestion = repair(rest.joined(separator: " "))
                guard !suggestion.isEmpty else { return nil }
                return suggestion.prefix(1).uppercased() + suggestion.dropFirst()
            }
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
