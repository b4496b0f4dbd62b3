import Foundation

/// Sorted-key JSON for discovery configs and state, written directly: the value types the
/// mapper uses (String, Bool, Int, Double, NSNull, arrays and `[String: Any]`). Foundation's
/// `JSONSerialization` bridged every dictionary to `NSDictionary` and sorted its keys through
/// `NSString` comparison: 38 % of an exporter's CPU under a flood of state reports. Keys sort
/// by their UTF-8 bytes; `/` is not escaped; other types are written as `null`.
enum ExportJSON {
    static func encode(_ object: [String: Any]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(object, into: &out)
        return out
    }

    static func write(_ value: Any, into out: inout [UInt8]) {
        switch value {
        case let s as String: string(s, into: &out)
        case let b as Bool: out += b ? Array("true".utf8) : Array("false".utf8)
        case let i as Int: out += Array(String(i).utf8)
        case let i as Int64: out += Array(String(i).utf8)
        case let d as Double: number(d, into: &out)
        case let o as [String: Any]:
            out.append(UInt8(ascii: "{"))
            for (n, key) in o.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                string(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(o[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case let a as [Any]:
            out.append(UInt8(ascii: "["))
            for (n, element) in a.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        default: out += Array("null".utf8)
        }
    }

    /// Integral values without a fraction (`100`, as JSONSerialization writes them); others in
    /// Swift's shortest round-tripping form; not-a-number and infinities as `null`.
    static func number(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else { return out += Array("null".utf8) }
        if d == d.rounded(), abs(d) < 9_007_199_254_740_992 {
            out += Array(String(Int64(d)).utf8)
        } else {
            out += Array("\(d)".utf8)
        }
    }

    static func string(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
