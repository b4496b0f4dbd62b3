/// The closed sets of the template language: operators, filters and tests. The parser maps
/// source words onto them once; the evaluator switches over them exhaustively, so a name the
/// parser accepts can never fall through to a default at evaluation time.
extension Template {
    /// Binary operators, loosest first within ``TemplateParser``'s precedence levels.
    enum BinaryOperator: String, Sendable, Hashable, CaseIterable {
        case or, and
        case equal = "==", notEqual = "!=", less = "<", greater = ">", lessOrEqual = "<=", greaterOrEqual = ">="
        case `in`
        case add = "+", subtract = "-", concatenate = "~"
        case multiply = "*", divide = "/", floorDivide = "//", modulo = "%", power = "**"

        static let comparisons: [BinaryOperator] = [.equal, .notEqual, .less, .greater, .lessOrEqual, .greaterOrEqual]
        static let additive: [BinaryOperator] = [.add, .subtract, .concatenate]
        static let multiplicative: [BinaryOperator] = [.multiply, .divide, .floorDivide, .modulo, .power]
    }

    enum UnaryOperator: String, Sendable, Hashable {
        case not
        case negate = "-"
    }

    /// `x is [not] <test>`.
    enum Test: String, Sendable, Hashable, CaseIterable {
        case defined, undefined, none, number, string
    }

    /// The filters (`value | float(0)`); some are also functions (`float(value, 0)`).
    enum Filter: String, Sendable, Hashable, CaseIterable {
        case float, int, round, abs, lower, upper, string, `default`, bool, trim, replace, length
        case isDefined = "is_defined", fromJSON = "from_json", toJSON = "to_json", capitalize, title, isNumber = "is_number", iif
        /// A list literal `[a, b]`: its items are the arguments (no name in the source).
        case list = "__list"

        /// The filter a source name means: its own name or an alias Jinja/Home Assistant accepts
        /// (`d` for `default`, `count` for `length`, `tojson` for `to_json`).
        init?(name: String) {
            switch name {
            case "d": self = .default
            case "count": self = .length
            case "tojson": self = .toJSON
            case "__list": return nil
            default: self.init(rawValue: name)
            }
        }

        /// The names the parser accepts after `|`, for the message that refuses another.
        static let names: [String] = (allCases.filter { $0 != .list }.map(\.rawValue) + ["d", "count", "tojson"]).sorted()

        /// Home Assistant's functions that are also filters: `float(x, 0)` is `x|float(0)`.
        static let functions: Set<Filter> = [.float, .int, .bool, .isNumber, .iif, .round, .abs, .string]
    }
}
