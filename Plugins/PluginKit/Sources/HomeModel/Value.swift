/// A dynamically typed attribute, argument or event-field value: the wire form and the form
/// drivers report in. Typed views (``OnOffTrait/Attributes``) read from it.
///
/// JSON form: `null`, `true`, `42`, `21.5`, `"text"`, `[…]`, `{…}`.
public enum Value: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case list([Value])
    case object([String: Value])

    public var isNull: Bool { if case .null = self { true } else { false } }

    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    /// The value as an integer: an `.int`, or a `.double` with no fractional part.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var listValue: [Value]? { if case .list(let l) = self { l } else { nil } }
    public var objectValue: [String: Value]? { if case .object(let o) = self { o } else { nil } }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .list: "list"
        case .object: "object"
        }
    }

    /// Reads `self[key]` when this is an object.
    public subscript(key: String) -> Value? { objectValue?[key] }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .int(let i): String(i)
        case .double(let d): String(d)
        case .string(let s): "\"\(s)\""
        case .list(let l): "[" + l.map(\.description).joined(separator: ", ") + "]"
        case .object(let o):
            "{" + o.keys.sorted().map { "\"\($0)\": \(o[$0]!.description)" }.joined(separator: ", ") + "}"
        }
    }
}

extension Value: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let l = try? c.decode([Value].self) {
            self = .list(l)
        } else if let o = try? c.decode([String: Value].self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .list(let l): try c.encode(l)
        case .object(let o): try c.encode(o)
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: Value...) { self = .list(elements) }
    public init(dictionaryLiteral elements: (String, Value)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
