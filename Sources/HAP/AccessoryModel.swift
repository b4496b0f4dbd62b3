import Foundation

/// A characteristic's value as HAP's JSON carries it.
public enum HAPValue: Sendable, Hashable, Decodable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case null

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) } else if let i = try? c.decode(Int.self) {
            self = .int(i)
        } else if let d = try? c.decode(Double.self) { self = .double(d) } else { self = .string(try c.decode(String.self)) }
    }

    /// As a number (bools as 0/1), for numeric characteristics.
    public var number: Double? {
        switch self {
        case .bool(let b): b ? 1 : 0
        case .int(let i): Double(i)
        case .double(let d): d
        case .string, .null: nil
        }
    }

    /// As a bool (1/0 accepted: controllers send either).
    public var bool: Bool? {
        switch self {
        case .bool(let b): b
        case .int(let i) where i == 0 || i == 1: i == 1
        default: nil
        }
    }

    public var description: String { JSONWriter.value(self) }
}

/// HAP status codes (HAP R2 table 6-11).
public enum HAPStatus: Int, Sendable, Hashable {
    case success = 0
    case insufficientPrivileges = -70401
    case unreachable = -70402
    case busy = -70403
    case readOnly = -70404
    case writeOnly = -70405
    case notificationNotSupported = -70406
    case outOfResources = -70407
    case timedOut = -70408
    case notFound = -70409
    case invalidValue = -70410
    case insufficientAuthorization = -70411
}

/// One characteristic (HAP R2 6.3.3).
public struct HAPCharacteristic: Sendable, Hashable {
    public enum Format: String, Sendable, Hashable {
        case bool, uint8, uint16, uint32, uint64, int, float, string, tlv8, data
    }

    public var iid: Int
    /// Short or full UUID ("25" is On).
    public var type: String
    public var format: Format
    /// "pr", "pw", "ev", "tw", "hd", "wr".
    public var perms: [String]
    /// nil for write-only characteristics or a value not known yet.
    public var value: HAPValue?
    /// ``HAPStatus/unreachable`` when the device behind it is offline: reads answer the
    /// status, not a stale value.
    public var status: HAPStatus = .success
    public var unit: String?
    public var minValue: Double?
    public var maxValue: Double?
    public var minStep: Double?
    public var validValues: [Int]?

    public init(
        iid: Int, type: String, format: Format, perms: [String], value: HAPValue?, unit: String? = nil, minValue: Double? = nil,
        maxValue: Double? = nil, minStep: Double? = nil, validValues: [Int]? = nil
    ) {
        self.iid = iid
        self.type = type
        self.format = format
        self.perms = perms
        self.value = value
        self.unit = unit
        self.minValue = minValue
        self.maxValue = maxValue
        self.minStep = minStep
        self.validValues = validValues
    }

    public var isReadable: Bool { perms.contains("pr") }
    public var isWritable: Bool { perms.contains("pw") }
    public var notifies: Bool { perms.contains("ev") }
    public var needsTimedWrite: Bool { perms.contains("tw") }

    /// Checks a written value against format and range; the value in the characteristic's format.
    public func validated(_ v: HAPValue) -> HAPValue? {
        switch format {
        case .bool:
            return v.bool.map(HAPValue.bool)
        case .string, .tlv8, .data:
            if case .string = v { return v }
            return nil
        case .float:
            guard let n = v.number, n.isFinite else { return nil }
            if let minValue, n < minValue { return nil }
            if let maxValue, n > maxValue { return nil }
            return .double(n)
        case .uint8, .uint16, .uint32, .uint64, .int:
            guard let n = v.number, n.isFinite, n == n.rounded() else { return nil }
            if let minValue, n < minValue { return nil }
            if let maxValue, n > maxValue { return nil }
            if format != .int, n < 0 { return nil }
            if let validValues, !validValues.contains(Int(n)) { return nil }
            return .int(Int(n))
        }
    }
}

public struct HAPService: Sendable, Hashable {
    public var iid: Int
    public var type: String
    public var characteristics: [HAPCharacteristic]
    public var primary: Bool
    public var hidden: Bool
    public var linked: [Int]

    public init(iid: Int, type: String, characteristics: [HAPCharacteristic], primary: Bool = false, hidden: Bool = false, linked: [Int] = []) {
        self.iid = iid
        self.type = type
        self.characteristics = characteristics
        self.primary = primary
        self.hidden = hidden
        self.linked = linked
    }
}

public struct HAPAccessory: Sendable, Hashable {
    public var aid: Int
    public var services: [HAPService]

    public init(aid: Int, services: [HAPService]) {
        self.aid = aid
        self.services = services
    }
}

/// An accessory and characteristic instance ID pair.
public struct CharacteristicID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var aid: Int
    public var iid: Int
    public init(aid: Int, iid: Int) {
        self.aid = aid
        self.iid = iid
    }
    public static func < (a: Self, b: Self) -> Bool { (a.aid, a.iid) < (b.aid, b.iid) }
    public var description: String { "\(aid).\(iid)" }
}

/// The accessories with an index by ID.
public struct AccessoryDatabase: Sendable {
    public let accessories: [HAPAccessory]
    let index: [CharacteristicID: HAPCharacteristic]

    public init(_ accessories: [HAPAccessory]) {
        self.accessories = accessories
        var index: [CharacteristicID: HAPCharacteristic] = [:]
        for a in accessories {
            for s in a.services {
                for c in s.characteristics { index[CharacteristicID(aid: a.aid, iid: c.iid)] = c }
            }
        }
        self.index = index
    }

    public subscript(id: CharacteristicID) -> HAPCharacteristic? { index[id] }

    /// `/accessories` JSON.
    public func json() -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\"accessories\":[")
        for (i, a) in accessories.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"aid\":\(a.aid),\"services\":[")
            for (j, s) in a.services.enumerated() {
                if j > 0 { w.raw(",") }
                w.raw("{\"iid\":\(s.iid),\"type\":")
                w.string(s.type)
                if s.primary { w.raw(",\"primary\":true") }
                if s.hidden { w.raw(",\"hidden\":true") }
                if !s.linked.isEmpty { w.raw(",\"linked\":[\(s.linked.map(String.init).joined(separator: ","))]") }
                w.raw(",\"characteristics\":[")
                for (k, c) in s.characteristics.enumerated() {
                    if k > 0 { w.raw(",") }
                    w.characteristic(c, aid: nil, meta: true, includeValue: true)
                }
                w.raw("]}")
            }
            w.raw("]}")
        }
        w.raw("]}")
        return w.bytes
    }
}

/// A small JSON writer: HAP's documents are flat, and numbers must keep their kind.
struct JSONWriter {
    var bytes: [UInt8] = []

    mutating func raw(_ s: String) { bytes += Array(s.utf8) }

    mutating func string(_ s: String) { raw(Self.quoted(s)) }

    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    static func number(_ d: Double) -> String {
        if d == d.rounded(), abs(d) < 1e15 { return String(Int(d)) }
        return String(d)
    }

    static func value(_ v: HAPValue) -> String {
        switch v {
        case .bool(let b): b ? "true" : "false"
        case .int(let i): String(i)
        case .double(let d): d.isFinite ? number(d) : "null"
        case .string(let s): quoted(s)
        case .null: "null"
        }
    }

    mutating func characteristic(_ c: HAPCharacteristic, aid: Int?, meta: Bool, includeValue: Bool) {
        raw("{")
        if let aid { raw("\"aid\":\(aid),") }
        raw("\"iid\":\(c.iid)")
        if meta {
            raw(",\"type\":")
            string(c.type)
            raw(",\"format\":\"\(c.format.rawValue)\",\"perms\":[\(c.perms.map { "\"\($0)\"" }.joined(separator: ","))]")
            if let u = c.unit { raw(",\"unit\":\"\(u)\"") }
            if let m = c.minValue { raw(",\"minValue\":\(Self.number(m))") }
            if let m = c.maxValue { raw(",\"maxValue\":\(Self.number(m))") }
            if let m = c.minStep { raw(",\"minStep\":\(Self.number(m))") }
            if let v = c.validValues { raw(",\"valid-values\":[\(v.map(String.init).joined(separator: ","))]") }
        }
        if includeValue, c.isReadable {
            if c.status != .success {
                if aid == nil { raw(",\"value\":null") }
            } else {
                raw(",\"value\":" + Self.value(c.value ?? .null))
            }
        }
        raw("}")
    }
}
