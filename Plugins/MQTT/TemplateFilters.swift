import HomeModel
import Foundation

/// The filters (`value | float(0)`) and the functions that are filters (`float(value, 0)`).
extension Evaluator {
    func filter(_ input: TemplateValue, _ filter: Template.Filter, _ args: [Value]) throws(TemplateError) -> TemplateValue {
        if filter == .default {
            if case .value(let v) = input, !(args.count > 1 && truthy(.value(args[1])) && !truthy(.value(v))) {
                return .value(v)
            }
            return .value(args.first ?? .string(""))
        }
        guard case .value(let v) = input else {
            if filter == .float || filter == .int, let fallback = args.first { return .value(fallback) }
            if case .undefined(let why) = input { throw TemplateError(why) }
            return input
        }
        switch filter {
        case .float:
            if let d = Self.number(v), d.isFinite { return .value(.double(d)) }
            if let fallback = args.first { return .value(fallback.doubleValue.map { .double($0) } ?? fallback) }
            throw TemplateError("cannot convert \(v.kindName) \(v) to a number (float)")
        case .int:
            if let d = Self.number(v), d.isFinite, abs(d) < 9.2e18 { return .value(.int(Int64(d.rounded(.towardZero)))) }
            if let fallback = args.first { return .value(fallback) }
            throw TemplateError("cannot convert \(v.kindName) \(v) to an integer (int)")
        case .round:
            guard let d = Self.number(v) else { throw TemplateError("cannot round \(v.kindName) \(v)") }
            let precision = args.first?.intValue ?? 0
            let method = args.count > 1 ? args[1].stringValue ?? "common" : "common"
            let scale = pow(10, Double(min(max(precision, 0), 12)))
            let rule: FloatingPointRoundingRule =
                method == "floor" ? .down : (method == "ceil" ? .up : .toNearestOrAwayFromZero)
            return .value(.double((d * scale).rounded(rule) / scale))
        case .abs:
            if case .int(let i) = v { return .value(.int(i.magnitude > UInt64(Int64.max) ? Int64.max : abs(i))) }
            guard let d = Self.number(v) else { throw TemplateError("cannot take abs of \(v.kindName) \(v)") }
            return .value(.double(abs(d)))
        case .lower: return .value(.string(v.templateText.lowercased()))
        case .upper: return .value(.string(v.templateText.uppercased()))
        case .capitalize, .title: return .value(.string(v.templateText.capitalized))
        case .string: return .value(.string(v.templateText))
        case .trim: return .value(.string(v.templateText.trimmingCharacters(in: .whitespacesAndNewlines)))
        case .bool:
            switch v.templateText.lowercased() {
            case "true", "yes", "on", "1", "enable": return .value(.bool(true))
            case "false", "no", "off", "0", "disable", "none": return .value(.bool(false))
            default: return .value(.bool(truthy(.value(v))))
            }
        case .replace:
            guard args.count >= 2 else { throw TemplateError("replace needs two arguments") }
            let (text, old, new) = (v.templateText, args[0].templateText, args[1].templateText)
            // Checked before building it: one replace could otherwise ask for gigabytes.
            if !old.isEmpty, new.utf8.count > old.utf8.count {
                let occurrences = text.components(separatedBy: old).count - 1
                let size = text.utf8.count + occurrences * (new.utf8.count - old.utf8.count)
                guard size <= Template.maximumStringBytes else {
                    throw TemplateError("the template builds a string longer than \(Template.maximumStringBytes) bytes")
                }
            }
            return .value(.string(text.replacingOccurrences(of: old, with: new)))
        case .length:
            switch v {
            case .list(let l): return .value(.int(Int64(l.count)))
            case .object(let o): return .value(.int(Int64(o.count)))
            default: return .value(.int(Int64(v.templateText.count)))
            }
        case .isDefined: return .value(v)
        case .isNumber:
            // Home Assistant: a number, or a string that parses as a finite one.
            if case .bool = v { return .value(.bool(false)) }
            return .value(.bool(Self.number(v)?.isFinite ?? false))
        case .iif:
            // value|iif(if_true, if_false, if_none): Home Assistant's immediate if.
            if v.isNull, args.count > 2 { return .value(args[2]) }
            return .value(truthy(.value(v)) ? (args.first ?? .bool(true)) : (args.count > 1 ? args[1] : .bool(false)))
        case .fromJSON:
            do {
                return .value(try JSONParser.parse(v.templateText))
            } catch {
                throw TemplateError("from_json: \(error)")
            }
        case .toJSON:
            return .value(.string(v.jsonText))
        case .default, .list:  // handled above and in `eval`
            return .value(v)
        }
    }
}
