public import HomeModel

/// A small, strict JSON parser that turns an MQTT payload into a ``Value``.
///
/// MQTT payloads come from anywhere, so the parser has hard limits: it refuses payloads nested
/// deeper than ``maximumDepth`` and never recurses further than that, and every error says
/// where the payload went wrong (`byte 17: expected ':' after an object key`).
public struct JSONParser {
    /// The deepest nesting of objects and arrays accepted.
    public static let maximumDepth = 64

    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public let offset: Int
        public let message: String
        public var description: String { "not valid JSON at byte \(offset): \(message)" }
    }

    let bytes: UnsafeRawBufferPointer
    var index = 0

    /// Parses `bytes` as one JSON value (surrounding whitespace allowed).
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Value {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.fail("unexpected data after the JSON value") }
        return value
    }

    /// Parses a string as JSON.
    public static func parse(_ text: String) throws(Failure) -> Value {
        let bytes = Array(text.utf8)
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(Failure) -> Value in try parse(buffer) } }
        return try result.get()
    }

    func fail(_ message: String) -> Failure { Failure(offset: index, message: message) }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(Failure) -> Value {
        guard let c = current else { throw fail("unexpected end of payload") }
        switch c {
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
            return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
            return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character '\(Self.printable(c))'")
        }
    }

    static func printable(_ c: UInt8) -> String {
        (0x20..<0x7F).contains(c) ? String(UnicodeScalar(c)) : "\\x" + String(c, radix: 16)
    }

    mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end of payload") }
        for i in 0..<count where bytes[index + i] != literal.utf8Start[i] {
            throw fail("expected '\(literal)'")
        }
        index += count
    }

    mutating func parseObject(depth: Int) throws(Failure) -> Value {
        index += 1
        var object: [String: Value] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw fail("expected a string key in an object") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected ':' after an object key") }
            index += 1
            skipWhitespace()
            object[key] = try parseValue(depth: depth)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(object)
            default: throw fail("expected ',' or '}' in an object")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(Failure) -> Value {
        index += 1
        var list: [Value] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .list(list)
        }
        while true {
            skipWhitespace()
            list.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .list(list)
            default: throw fail("expected ',' or ']' in a list")
            }
        }
    }

    mutating func parseString() throws(Failure) -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                let s = try Self.validUTF8(UnsafeRawBufferPointer(rebasing: bytes[start..<index]), at: start)
                index += 1
                return s
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw fail("control character in a string") }
            index += 1
        }
        var scalars = Array(bytes[start..<index])
        while index < bytes.count {
            let c = bytes[index]
            switch c {
            case UInt8(ascii: "\""):
                index += 1
                guard let s = String(validating: scalars, as: UTF8.self) else {
                    throw Failure(offset: start, message: "a string is not valid UTF-8")
                }
                return s
            case UInt8(ascii: "\\"):
                index += 1
                guard let e = current else { throw fail("unexpected end of payload in an escape") }
                index += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(e)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code), current == UInt8(ascii: "\\"), index + 1 < bytes.count,
                        bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    // A lone surrogate is not a character: refused, never replaced.
                    guard let scalar = Unicode.Scalar(code) else { throw fail("\\u escape of a lone surrogate") }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw fail("invalid escape '\\\(Self.printable(e))'")
                }
            default:
                if c < 0x20 { throw fail("control character in a string") }
                scalars.append(c)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    /// The bytes as a string; invalid UTF-8 is refused (never replaced with U+FFFD).
    static func validUTF8(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(Failure) -> String {
        if !bytes.contains(where: { $0 >= 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw Failure(offset: offset, message: "a string is not valid UTF-8")
        }
        return s
    }

    mutating func parseHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("unexpected end of payload in \\u escape") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit in \\u escape")
            }
            code = code << 4 | digit
            index += 1
        }
        return code
    }

    mutating func parseNumber() throws(Failure) -> Value {
        let start = index
        var isInteger = true
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw fail("expected a digit")
        }
        index += 1
        if first == UInt8(ascii: "0"), let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) {
            throw fail("a number may not start with 0")
        }
        while let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { index += 1 }
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) else {
                throw fail("expected a digit after '.'")
            }
            while let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) else {
                throw fail("expected a digit in the exponent")
            }
            while let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { index += 1 }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else { throw Failure(offset: start, message: "number \(text) is out of range") }
        return .double(d)
    }
}

extension Value {
    /// The value as text the way a template prints it: strings bare, numbers plainly.
    var templateText: String {
        switch self {
        case .null: "None"
        case .bool(let b): b ? "True" : "False"
        case .int(let i): String(i)
        case .double(let d): d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) + ".0" : String(d)
        case .string(let s): s
        case .list, .object: description
        }
    }
}
