import HomeModel
import Foundation

/// The subset of Home Assistant's Jinja templates that MQTT devices really send in discovery
/// messages: `{{ value }}`, `{{ value_json.x }}`, `{{ value_json['x'].y[0] }}`, filters
/// (`float`, `int`, `round`, `default`, `lower`, `upper`, `string`, `abs`, `bool`, `trim`,
/// `replace`, `length`, `is_defined`, `from_json`, `to_json`), arithmetic, comparisons,
/// `and`/`or`/`not`, inline `x if c else y`, `is [not] defined`, and `{% if %}…{% elif %}…
/// {% else %}…{% endif %}` blocks.
///
/// Compiling refuses anything else with ``TemplateError`` naming what is unsupported, so an
/// entity whose template cannot be evaluated is reported once, at discovery time.
struct Template: Sendable, Hashable {
    /// Limits that keep a hostile template from exhausting the stack or memory: the source's
    /// size, the nesting of `{% if %}` blocks and of expressions (parentheses, lists, indexes,
    /// filter arguments, `else` chains), the tokens of one expression (which bounds the height
    /// of its tree, so evaluation recursion is bounded too) and the size of any string a template
    /// builds while it is evaluated.
    static let maximumSourceBytes = 32 * 1024
    static let maximumBlockDepth = 32
    static let maximumExpressionDepth = 32
    static let maximumTokens = 400
    static let maximumStringBytes = 1 << 20

    let source: String
    let root: [Node]

    indirect enum Node: Sendable, Hashable {
        case text(String)
        case expression(Expr)
        case conditional([(Expr, [Node])], otherwise: [Node])

        static func == (a: Node, b: Node) -> Bool { String(describing: a) == String(describing: b) }
        func hash(into h: inout Hasher) { h.combine(String(describing: self)) }
    }

    indirect enum Expr: Sendable, Hashable {
        case literal(Value)
        case name(String)
        case member(Expr, String)
        case index(Expr, Expr)
        case filter(Expr, Filter, [Expr])
        case unary(UnaryOperator, Expr)
        case binary(BinaryOperator, Expr, Expr)
        case ternary(Expr, condition: Expr, otherwise: Expr)
        case test(Expr, Test, negated: Bool)
    }

    /// Compiles a template.
    /// - Throws: ``TemplateError`` naming the unsupported construct or the syntax error.
    init(_ source: String) throws(TemplateError) {
        guard source.utf8.count <= Self.maximumSourceBytes else {
            throw TemplateError("the template is longer than \(Self.maximumSourceBytes) bytes")
        }
        self.source = source
        var parser = TemplateParser(source: source)
        root = try parser.parseTemplate()
    }

    /// Renders the template for one payload. A template that is just `{{ expression }}`
    /// returns the expression's value with its type; anything else renders as a string.
    func render(_ variables: Variables) throws(TemplateError) -> Value {
        if root.count == 1, case .expression(let e) = root[0] {
            return try Evaluator(variables: variables).value(of: e)
        }
        var out = ""
        try Evaluator(variables: variables).render(root, into: &out)
        return .string(out)
    }

    /// What a template sees: `value` (the payload as text), `value_json` (the payload parsed as
    /// JSON, when it is JSON) and any extra names (command templates get their arguments).
    ///
    /// Built over a ``Message``, the text and the JSON are computed only if the template
    /// uses them, once per message.
    struct Variables {
        private let message: Message?
        private let fixedValue: String
        private let fixedJSON: Result<Value, JSONParser.Failure>?
        let extra: [String: Value]

        init(value: String, json: Result<Value, JSONParser.Failure>?, extra: [String: Value] = [:]) {
            message = nil
            fixedValue = value
            fixedJSON = json
            self.extra = extra
        }

        init(message: Message) {
            self.message = message
            fixedValue = ""
            fixedJSON = nil
            extra = [:]
        }

        var value: String { message?.text ?? fixedValue }
        var json: Result<Value, JSONParser.Failure>? {
            // Not `message.map(\.json)`: a key path applied once per message cost more than
            // the lookup it made.
            if let message { return message.json }
            return fixedJSON
        }
    }
}

/// A template that cannot be compiled or evaluated.
struct TemplateError: Error, Hashable, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
