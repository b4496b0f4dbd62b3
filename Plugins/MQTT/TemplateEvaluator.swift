import HomeModel
import Foundation

// MARK: - Evaluation

/// A template value: a value, or undefined (a missing key) with the reason.
enum TemplateValue {
    case value(Value)
    case undefined(String)
}

struct Evaluator {
    let variables: Template.Variables

    func render(_ nodes: [Template.Node], into out: inout String) throws(TemplateError) {
        for node in nodes {
            switch node {
            case .text(let t): out += t
            case .expression(let e):
                switch try eval(e) {
                case .value(let v): out += v.templateText
                case .undefined: break
                }
            case .conditional(let branches, let otherwise):
                var taken = false
                for (condition, body) in branches where try truthy(eval(condition)) {
                    try render(body, into: &out)
                    taken = true
                    break
                }
                if !taken { try render(otherwise, into: &out) }
            }
        }
    }

    func value(of e: Template.Expr) throws(TemplateError) -> Value {
        switch try eval(e) {
        case .value(let v): return v
        case .undefined(let why): throw TemplateError(why)
        }
    }

    func truthy(_ t: TemplateValue) -> Bool {
        guard case .value(let v) = t else { return false }
        switch v {
        case .null: return false
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .double(let d): return d != 0
        case .string(let s): return !s.isEmpty
        case .list(let l): return !l.isEmpty
        case .object(let o): return !o.isEmpty
        }
    }

    func eval(_ e: Template.Expr) throws(TemplateError) -> TemplateValue {
        switch e {
        case .literal(let v): return .value(v)
        case .name(let n):
            switch n {
            case "value": return .value(.string(variables.value))
            case "value_json":
                switch variables.json {
                case .success(let v)?: return .value(v)
                case .failure(let f)?: return .undefined("the payload is \(f)")
                case nil: return .undefined("the payload is not JSON")
                }
            default:
                if let v = variables.extra[n] { return .value(v) }
                return .undefined("'\(n)' is undefined")
            }
        case .member(let base, let key):
            return lookup(try eval(base), .string(key), label: ".\(key)")
        case .index(let base, let key):
            let k = try value(of: key)
            return lookup(try eval(base), k, label: "[\(k)]")
        case .filter(let base, let filter, let args):
            // A list literal `[a, b]` is parsed as the internal filter `list` over its items.
            if filter == .list { return .value(.list(try args.map { (a) throws(TemplateError) in try value(of: a) })) }
            return try Self.bounded(self.filter(try eval(base), filter, try args.map { (a) throws(TemplateError) in try value(of: a) }))
        case .unary(let op, let x):
            let v = try eval(x)
            if op == .not { return .value(.bool(!truthy(v))) }
            guard case .value(let n) = v, let d = n.doubleValue ?? Double(n.stringValue ?? "") else {
                throw TemplateError("cannot negate \(describe(v))")
            }
            if case .int(let i) = n, i != .min { return .value(.int(-i)) }
            return .value(.double(-d))
        case .binary(let op, let a, let b):
            switch op {
            case .and:
                let l = try eval(a)
                return truthy(l) ? try eval(b) : l
            case .or:
                let l = try eval(a)
                return truthy(l) ? l : try eval(b)
            default: break
            }
            return try Self.bounded(.value(binary(op, try value(of: a), try value(of: b))))
        case .ternary(let v, let condition, let otherwise):
            return truthy(try eval(condition)) ? try eval(v) : try eval(otherwise)
        case .test(let x, let test, let negated):
            let v = try eval(x)
            var result: Bool
            switch test {
            case .defined: if case .value = v { result = true } else { result = false }
            case .undefined: if case .value = v { result = false } else { result = true }
            case .none: if case .value(.null) = v { result = true } else { result = false }
            case .number: if case .value(let n) = v, n.doubleValue != nil { result = true } else { result = false }
            case .string: if case .value(.string) = v { result = true } else { result = false }
            }
            if negated { result.toggle() }
            return .value(.bool(result))
        }
    }

    /// Refuses a string longer than ``Template/maximumStringBytes`` (`replace` and `~` could
    /// otherwise grow one exponentially).
    static func bounded(_ v: TemplateValue) throws(TemplateError) -> TemplateValue {
        if case .value(.string(let s)) = v, s.utf8.count > Template.maximumStringBytes {
            throw TemplateError("the template builds a string longer than \(Template.maximumStringBytes) bytes")
        }
        return v
    }

    func describe(_ v: TemplateValue) -> String {
        switch v {
        case .value(let v): "\(v.kindName) \(v)"
        case .undefined(let why): "an undefined value (\(why))"
        }
    }

    /// `label` names the key in the refusal of a value that has no keys (built only then).
    func lookup(_ base: TemplateValue, _ key: Value, label: @autoclosure () -> String) -> TemplateValue {
        switch base {
        case .undefined(let why): return .undefined(why)
        case .value(.object(let o)):
            guard let k = key.stringValue ?? key.intValue.map({ String($0) }) else {
                return .undefined("an object has no key \(key)")
            }
            if let v = o[k] { return .value(v) }
            return .undefined("the payload has no key '\(k)'")
        case .value(.list(let l)):
            guard let i = key.intValue else { return .undefined("a list has no key \(key)") }
            let index = i < 0 ? Int(i) + l.count : Int(i)
            guard l.indices.contains(index) else { return .undefined("list index \(i) is out of range") }
            return .value(l[index])
        case .value(let v):
            return .undefined("\(v.kindName) \(v) has no key \(label())")
        }
    }

    static func number(_ v: Value) -> Double? {
        if let d = v.doubleValue { return d }
        if let s = v.stringValue { return Double(s.trimmingCharacters(in: .whitespaces)) }
        if let b = v.boolValue { return b ? 1 : 0 }
        return nil
    }
}

/// Operators.
extension Evaluator {
    func binary(_ op: Template.BinaryOperator, _ a: Value, _ b: Value) throws(TemplateError) -> Value {
        switch op {
        case .equal: return .bool(Self.equal(a, b))
        case .notEqual: return .bool(!Self.equal(a, b))
        case .in:
            switch b {
            case .list(let l): return .bool(l.contains { Self.equal($0, a) })
            case .object(let o): return .bool(o[a.templateText] != nil)
            default: return .bool(b.templateText.contains(a.templateText))
            }
        case .concatenate: return .string(a.templateText + b.templateText)
        case .and, .or:  // short-circuiting; evaluated in `eval`
            throw TemplateError("'\(op.rawValue)' is not a value operator")
        default: break
        }
        if op == .add, case .string(let x) = a, case .string(let y) = b { return .string(x + y) }
        guard let x = a.doubleValue, let y = b.doubleValue else {
            throw TemplateError("cannot apply '\(op.rawValue)' to \(a.kindName) \(a) and \(b.kindName) \(b)")
        }
        let bothInt = a.intValue != nil && b.intValue != nil && { if case .int = a, case .int = b { true } else { false } }()
        switch op {
        case .less: return .bool(x < y)
        case .greater: return .bool(x > y)
        case .lessOrEqual: return .bool(x <= y)
        case .greaterOrEqual: return .bool(x >= y)
        case .add: return bothInt ? .int(a.intValue! &+ b.intValue!) : .double(x + y)
        case .subtract: return bothInt ? .int(a.intValue! &- b.intValue!) : .double(x - y)
        case .multiply: return bothInt ? .int(a.intValue! &* b.intValue!) : .double(x * y)
        case .divide:
            guard y != 0 else { throw TemplateError("division by zero") }
            return .double(x / y)
        case .floorDivide:
            guard y != 0 else { throw TemplateError("division by zero") }
            if bothInt, let i = Self.floorDivision(a.intValue!, b.intValue!) { return .int(i) }
            return .double((x / y).rounded(.down))
        case .modulo:
            guard y != 0 else { throw TemplateError("division by zero") }
            // Python's modulo takes the divisor's sign.
            if bothInt {
                let (r, _) = a.intValue!.remainderReportingOverflow(dividingBy: b.intValue!)
                return .int(r != 0 && (r < 0) != (b.intValue! < 0) ? r + b.intValue! : r)
            }
            // Python: the result takes the divisor's sign for floats too (-7.5 % 2 == 0.5).
            let r = x.truncatingRemainder(dividingBy: y)
            return .double(r != 0 && (r < 0) != (y < 0) ? r + y : r)
        case .power:
            return .double(pow(x, y))
        case .equal, .notEqual, .in, .concatenate, .and, .or:
            throw TemplateError("'\(op.rawValue)' was handled above")  // unreachable: returned or thrown above
        }
    }

    /// Python's `//` on integers (rounds toward −∞); nil when it overflows (`Int64.min // -1`).
    static func floorDivision(_ a: Int64, _ b: Int64) -> Int64? {
        let (q, overflow) = a.dividedReportingOverflow(by: b)
        if overflow { return nil }
        return (a % b != 0) && ((a < 0) != (b < 0)) ? q - 1 : q
    }

    static func equal(_ a: Value, _ b: Value) -> Bool {
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        return a == b
    }
}

extension Value {
    /// The value as compact JSON.
    var jsonText: String {
        switch self {
        case .string(let s):
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if u.value < 0x20 {
                        out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16)
                    } else {
                        out.unicodeScalars.append(u)
                    }
                }
            }
            return out + "\""
        case .list(let l): return "[" + l.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.keys.sorted().map { Value.string($0).jsonText + ":" + o[$0]!.jsonText }.joined(separator: ",") + "}"
        case .double(let d): return d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        default: return description
        }
    }
}
