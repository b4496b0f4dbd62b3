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
        case filter(Expr, String, [Expr])
        case unary(String, Expr)
        case binary(String, Expr, Expr)
        case ternary(Expr, condition: Expr, otherwise: Expr)
        case test(Expr, String, negated: Bool)
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
        var json: Result<Value, JSONParser.Failure>? { message.map(\.json) ?? fixedJSON }
    }
}

/// A template that cannot be compiled or evaluated.
struct TemplateError: Error, Hashable, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

// MARK: - Parsing

struct TemplateParser {
    enum Token: Hashable {
        case number(Value), string(String), name(String), op(String), end
    }

    let source: String
    var chars: [Character]
    var i = 0

    init(source: String) {
        self.source = source
        chars = Array(source)
    }

    mutating func parseTemplate() throws(TemplateError) -> [Template.Node] {
        var stack: [(branches: [(Template.Expr, [Template.Node])], otherwise: [Template.Node]?, current: [Template.Node])] = []
        var nodes: [Template.Node] = []
        var text = ""
        func flush() {
            if !text.isEmpty {
                nodes.append(.text(text))
                text = ""
            }
        }
        while i < chars.count {
            if chars[i] == "{", i + 1 < chars.count, chars[i + 1] == "{" || chars[i + 1] == "%" || chars[i + 1] == "#" {
                let kind = chars[i + 1]
                let close: Character = kind == "{" ? "}" : (kind == "%" ? "%" : "#")
                var start = i + 2
                if start < chars.count, chars[start] == "-" {
                    start += 1
                    while let last = text.last, last.isWhitespace { text.removeLast() }
                }
                guard let end = findClose(from: start, close) else {
                    throw TemplateError("unterminated '\(kind == "{" ? "{{" : "{%")' at character \(i + 1)")
                }
                var inner = String(chars[start..<end])
                var trimAfter = false
                if inner.hasSuffix("-") {
                    inner.removeLast()
                    trimAfter = true
                }
                i = end + 2
                if trimAfter { while i < chars.count, chars[i].isWhitespace { i += 1 } }
                flush()
                switch kind {
                case "#": continue
                case "{":
                    nodes.append(.expression(try Self.parseExpression(inner)))
                default:
                    let words = inner.trimmingCharacters(in: .whitespaces)
                    let keyword = words.prefix { $0.isLetter }
                    let rest = String(words.dropFirst(keyword.count))
                    switch keyword {
                    case "if":
                        guard stack.count < Template.maximumBlockDepth else {
                            throw TemplateError("'{% if %}' blocks nested deeper than \(Template.maximumBlockDepth) levels")
                        }
                        stack.append((branches: [(try Self.parseExpression(rest), [])], otherwise: nil, current: nodes))
                        nodes = []
                    case "elif":
                        guard !stack.isEmpty, stack[stack.count - 1].otherwise == nil else {
                            throw TemplateError("'{% elif %}' without '{% if %}'")
                        }
                        stack[stack.count - 1].branches[stack[stack.count - 1].branches.count - 1].1 = nodes
                        stack[stack.count - 1].branches.append((try Self.parseExpression(rest), []))
                        nodes = []
                    case "else":
                        guard !stack.isEmpty, stack[stack.count - 1].otherwise == nil else {
                            throw TemplateError("'{% else %}' without '{% if %}'")
                        }
                        stack[stack.count - 1].branches[stack[stack.count - 1].branches.count - 1].1 = nodes
                        stack[stack.count - 1].otherwise = []
                        nodes = []
                    case "endif":
                        guard var frame = stack.popLast() else { throw TemplateError("'{% endif %}' without '{% if %}'") }
                        if frame.otherwise != nil {
                            frame.otherwise = nodes
                        } else {
                            frame.branches[frame.branches.count - 1].1 = nodes
                        }
                        nodes = frame.current
                        nodes.append(.conditional(frame.branches, otherwise: frame.otherwise ?? []))
                    default:
                        throw TemplateError("unsupported template statement '{% \(words) %}' (only if/elif/else/endif)")
                    }
                }
            } else {
                text.append(chars[i])
                i += 1
            }
        }
        flush()
        guard stack.isEmpty else { throw TemplateError("'{% if %}' without '{% endif %}'") }
        return nodes
    }

    func findClose(from start: Int, _ close: Character) -> Int? {
        var j = start
        var quote: Character?
        while j + 1 < chars.count {
            let c = chars[j]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" {
                quote = c
            } else if c == close, chars[j + 1] == "}" {
                return j
            }
            j += 1
        }
        return nil
    }

    static func parseExpression(_ text: String) throws(TemplateError) -> Template.Expr {
        var p = ExpressionParser(tokens: try tokenize(text), text: text)
        let e = try p.ternary()
        guard p.peek == .end else { throw TemplateError("unexpected \(p.describe(p.peek)) in '{{\(text.shortened)}}'") }
        return e
    }

    static func tokenize(_ text: String) throws(TemplateError) -> [Token] {
        var tokens: [Token] = []
        let c = Array(text)
        var i = 0
        let ops = ["==", "!=", "<=", ">=", "//", "**", "<", ">", "+", "-", "*", "/", "%", "|", ".", "[", "]", "(", ")", ",", "~", ":"]
        while i < c.count {
            guard tokens.count < Template.maximumTokens else {
                throw TemplateError("an expression of more than \(Template.maximumTokens) tokens in '{{\(text.prefix(40))…}}'")
            }
            let ch = c[i]
            if ch.isWhitespace {
                i += 1
            } else if ch.isNumber {
                var j = i
                var sawDot = false
                while j < c.count, c[j].isNumber || (c[j] == "." && !sawDot && j + 1 < c.count && c[j + 1].isNumber) {
                    if c[j] == "." { sawDot = true }
                    j += 1
                }
                let s = String(c[i..<j])
                tokens.append(.number(sawDot ? .double(Double(s) ?? 0) : .int(Int64(s) ?? 0)))
                i = j
            } else if ch == "'" || ch == "\"" {
                var j = i + 1
                var s = ""
                while j < c.count, c[j] != ch {
                    if c[j] == "\\", j + 1 < c.count {
                        j += 1
                        s.append(c[j] == "n" ? "\n" : c[j])
                    } else {
                        s.append(c[j])
                    }
                    j += 1
                }
                guard j < c.count else { throw TemplateError("unterminated string in '{{\(text.shortened)}}'") }
                tokens.append(.string(s))
                i = j + 1
            } else if ch.isLetter || ch == "_" {
                var j = i
                while j < c.count, c[j].isLetter || c[j].isNumber || c[j] == "_" { j += 1 }
                tokens.append(.name(String(c[i..<j])))
                i = j
            } else if let op = ops.first(where: { op in
                let o = Array(op)
                return i + o.count <= c.count && Array(c[i..<(i + o.count)]) == o
            }) {
                tokens.append(.op(op))
                i += op.count
            } else {
                throw TemplateError("unsupported character '\(ch)' in '{{\(text.shortened)}}'")
            }
        }
        tokens.append(.end)
        return tokens
    }
}

struct ExpressionParser {
    typealias Token = TemplateParser.Token
    typealias Expr = Template.Expr
    let tokens: [Token]
    let text: String
    var position = 0
    /// How deeply ``ternary()`` is nested (parentheses, lists, indexes, arguments, `else` chains).
    var depth = 0

    init(tokens: [Token], text: String) {
        self.tokens = tokens
        self.text = text
    }

    var peek: Token { tokens[position] }
    mutating func next() -> Token {
        defer { if position < tokens.count - 1 { position += 1 } }
        return tokens[position]
    }

    func describe(_ t: Token) -> String {
        switch t {
        case .number(let v): "number \(v)"
        case .string(let s): "string '\(s)'"
        case .name(let n): "'\(n)'"
        case .op(let o): "'\(o)'"
        case .end: "end of expression"
        }
    }

    func error(_ what: String) -> TemplateError { TemplateError("\(what) in '{{\(text.shortened)}}'") }

    mutating func accept(_ op: String) -> Bool {
        if peek == .op(op) || peek == .name(op) {
            position += 1
            return true
        }
        return false
    }

    mutating func expect(_ op: String) throws(TemplateError) {
        guard accept(op) else { throw error("expected '\(op)', found \(describe(peek))") }
    }

    mutating func ternary() throws(TemplateError) -> Expr {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Template.maximumExpressionDepth else {
            throw error("expressions nested deeper than \(Template.maximumExpressionDepth) levels")
        }
        let value = try or()
        if accept("if") {
            let condition = try or()
            let otherwise: Expr = accept("else") ? try ternary() : .literal(.string(""))
            return .ternary(value, condition: condition, otherwise: otherwise)
        }
        return value
    }

    mutating func or() throws(TemplateError) -> Expr {
        var e = try and()
        while accept("or") { e = .binary("or", e, try and()) }
        return e
    }

    mutating func and() throws(TemplateError) -> Expr {
        var e = try not()
        while accept("and") { e = .binary("and", e, try not()) }
        return e
    }

    mutating func not() throws(TemplateError) -> Expr {
        var negations = 0
        while accept("not") { negations += 1 }
        var e = try comparison()
        for _ in 0..<negations { e = .unary("not", e) }
        return e
    }

    mutating func comparison() throws(TemplateError) -> Expr {
        var e = try additive()
        while true {
            if case .op(let op) = peek, ["==", "!=", "<", ">", "<=", ">="].contains(op) {
                position += 1
                e = .binary(op, e, try additive())
            } else if accept("in") {
                e = .binary("in", e, try additive())
            } else if peek == .name("not"), tokens[position + 1] == .name("in") {
                position += 2
                e = .unary("not", .binary("in", e, try additive()))
            } else if accept("is") {
                let negated = accept("not")
                guard case .name(let test) = next() else { throw error("expected a test name after 'is'") }
                guard ["defined", "undefined", "none", "number", "string"].contains(test) else {
                    throw error("unsupported test 'is \(test)'")
                }
                e = .test(e, test, negated: negated)
            } else {
                return e
            }
        }
    }

    mutating func additive() throws(TemplateError) -> Expr {
        var e = try multiplicative()
        while case .op(let op) = peek, ["+", "-", "~"].contains(op) {
            position += 1
            e = .binary(op, e, try multiplicative())
        }
        return e
    }

    mutating func multiplicative() throws(TemplateError) -> Expr {
        var e = try unary()
        while case .op(let op) = peek, ["*", "/", "//", "%", "**"].contains(op) {
            position += 1
            e = .binary(op, e, try unary())
        }
        return e
    }

    mutating func unary() throws(TemplateError) -> Expr {
        var negations = 0
        while true {
            if accept("-") {
                negations += 1
            } else if !accept("+") {
                break
            }
        }
        var e = try filtered()
        for _ in 0..<negations { e = .unary("-", e) }
        return e
    }

    static let filters: Set<String> = [
        "float", "int", "round", "abs", "lower", "upper", "string", "default", "d", "bool", "trim", "replace",
        "length", "count", "is_defined", "from_json", "to_json", "tojson", "capitalize", "title", "is_number", "iif",
    ]

    /// Home Assistant's functions that are also filters: `float(x, 0)` is `x|float(0)`.
    static let functions: Set<String> = ["float", "int", "bool", "is_number", "iif", "round", "abs", "string"]

    mutating func filtered() throws(TemplateError) -> Expr {
        var e = try postfix()
        while accept("|") {
            guard case .name(let name) = next() else { throw error("expected a filter name after '|'") }
            guard Self.filters.contains(name) else {
                throw error("unsupported filter '\(name)' (supported: \(Self.filters.sorted().joined(separator: ", ")))")
            }
            var args: [Expr] = []
            if accept("(") {
                if !accept(")") {
                    repeat {
                        // Keyword arguments (round(1, 'floor'), default(0, true)) are taken by position.
                        if case .name = peek, tokens[position + 1] == .op("=") { position += 2 }
                        args.append(try ternary())
                    } while accept(",")
                    try expect(")")
                }
            }
            e = .filter(e, name, args)
        }
        return e
    }

    mutating func postfix() throws(TemplateError) -> Expr {
        var e = try primary()
        while true {
            if accept(".") {
                switch next() {
                case .name(let n): e = .member(e, n)
                case .number(.int(let i)): e = .index(e, .literal(.int(i)))
                case let t: throw error("expected a name after '.', found \(describe(t))")
                }
            } else if accept("[") {
                let key = try ternary()
                try expect("]")
                e = .index(e, key)
            } else if peek == .op("(") {
                throw error("unsupported function call")
            } else {
                return e
            }
        }
    }

    mutating func primary() throws(TemplateError) -> Expr {
        switch next() {
        case .number(let v): return .literal(v)
        case .string(let s): return .literal(.string(s))
        case .name(let n):
            switch n {
            case "true", "True": return .literal(.bool(true))
            case "false", "False": return .literal(.bool(false))
            case "none", "None": return .literal(.null)
            default:
                if peek == .op("(") {
                    guard Self.functions.contains(n) else {
                        throw error("unsupported function '\(n)()' (supported: \(Self.functions.sorted().joined(separator: ", ")))")
                    }
                    position += 1
                    var args: [Expr] = []
                    if !accept(")") {
                        repeat { args.append(try ternary()) } while accept(",")
                        try expect(")")
                    }
                    guard let first = args.first else { throw error("\(n)() needs an argument") }
                    return .filter(first, n, Array(args.dropFirst()))
                }
                return .name(n)
            }
        case .op("("):
            let e = try ternary()
            try expect(")")
            return e
        case .op("["):
            var items: [Expr] = []
            if !accept("]") {
                repeat { items.append(try ternary()) } while accept(",")
                try expect("]")
            }
            return .filter(.literal(.null), "__list", items)
        case let t: throw error("unexpected \(describe(t))")
        }
    }
}

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
        case .filter(let base, let name, let args):
            // A list literal `[a, b]` is parsed as the internal filter `__list` over its items.
            if name == "__list" { return .value(.list(try args.map { (a) throws(TemplateError) in try value(of: a) })) }
            return try Self.bounded(filter(try eval(base), name, try args.map { (a) throws(TemplateError) in try value(of: a) }))
        case .unary(let op, let x):
            let v = try eval(x)
            if op == "not" { return .value(.bool(!truthy(v))) }
            guard case .value(let n) = v, let d = n.doubleValue ?? Double(n.stringValue ?? "") else {
                throw TemplateError("cannot negate \(describe(v))")
            }
            if case .int(let i) = n, i != .min { return .value(.int(-i)) }
            return .value(.double(-d))
        case .binary(let op, let a, let b):
            if op == "and" {
                let l = try eval(a)
                return truthy(l) ? try eval(b) : l
            }
            if op == "or" {
                let l = try eval(a)
                return truthy(l) ? l : try eval(b)
            }
            return try Self.bounded(.value(binary(op, try value(of: a), try value(of: b))))
        case .ternary(let v, let condition, let otherwise):
            return truthy(try eval(condition)) ? try eval(v) : try eval(otherwise)
        case .test(let x, let test, let negated):
            let v = try eval(x)
            var result: Bool
            switch test {
            case "defined": if case .value = v { result = true } else { result = false }
            case "undefined": if case .value = v { result = false } else { result = true }
            case "none": if case .value(.null) = v { result = true } else { result = false }
            case "number": if case .value(let n) = v, n.doubleValue != nil { result = true } else { result = false }
            default: if case .value(.string) = v { result = true } else { result = false }
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

    func lookup(_ base: TemplateValue, _ key: Value, label: String) -> TemplateValue {
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
            return .undefined("\(v.kindName) \(v) has no key \(label)")
        }
    }

    static func number(_ v: Value) -> Double? {
        if let d = v.doubleValue { return d }
        if let s = v.stringValue { return Double(s.trimmingCharacters(in: .whitespaces)) }
        if let b = v.boolValue { return b ? 1 : 0 }
        return nil
    }

    func filter(_ input: TemplateValue, _ name: String, _ args: [Value]) throws(TemplateError) -> TemplateValue {
        if name == "default" || name == "d" {
            if case .value(let v) = input, !(args.count > 1 && truthy(.value(args[1])) && !truthy(.value(v))) {
                return .value(v)
            }
            return .value(args.first ?? .string(""))
        }
        guard case .value(let v) = input else {
            if (name == "float" || name == "int"), let fallback = args.first { return .value(fallback) }
            if case .undefined(let why) = input { throw TemplateError(why) }
            return input
        }
        switch name {
        case "float":
            if let d = Self.number(v), d.isFinite { return .value(.double(d)) }
            if let fallback = args.first { return .value(fallback.doubleValue.map { .double($0) } ?? fallback) }
            throw TemplateError("cannot convert \(v.kindName) \(v) to a number (float)")
        case "int":
            if let d = Self.number(v), d.isFinite, abs(d) < 9.2e18 { return .value(.int(Int64(d.rounded(.towardZero)))) }
            if let fallback = args.first { return .value(fallback) }
            throw TemplateError("cannot convert \(v.kindName) \(v) to an integer (int)")
        case "round":
            guard let d = Self.number(v) else { throw TemplateError("cannot round \(v.kindName) \(v)") }
            let precision = args.first?.intValue ?? 0
            let method = args.count > 1 ? args[1].stringValue ?? "common" : "common"
            let scale = pow(10, Double(min(max(precision, 0), 12)))
            let rule: FloatingPointRoundingRule =
                method == "floor" ? .down : (method == "ceil" ? .up : .toNearestOrAwayFromZero)
            return .value(.double((d * scale).rounded(rule) / scale))
        case "abs":
            if case .int(let i) = v { return .value(.int(i.magnitude > UInt64(Int64.max) ? Int64.max : abs(i))) }
            guard let d = Self.number(v) else { throw TemplateError("cannot take abs of \(v.kindName) \(v)") }
            return .value(.double(abs(d)))
        case "lower": return .value(.string(v.templateText.lowercased()))
        case "upper": return .value(.string(v.templateText.uppercased()))
        case "capitalize", "title": return .value(.string(v.templateText.capitalized))
        case "string": return .value(.string(v.templateText))
        case "trim": return .value(.string(v.templateText.trimmingCharacters(in: .whitespacesAndNewlines)))
        case "bool":
            switch v.templateText.lowercased() {
            case "true", "yes", "on", "1", "enable": return .value(.bool(true))
            case "false", "no", "off", "0", "disable", "none": return .value(.bool(false))
            default: return .value(.bool(truthy(.value(v))))
            }
        case "replace":
            guard args.count >= 2 else { throw TemplateError("replace needs two arguments") }
            return .value(.string(v.templateText.replacingOccurrences(of: args[0].templateText, with: args[1].templateText)))
        case "length", "count":
            switch v {
            case .list(let l): return .value(.int(Int64(l.count)))
            case .object(let o): return .value(.int(Int64(o.count)))
            default: return .value(.int(Int64(v.templateText.count)))
            }
        case "is_defined": return .value(v)
        case "is_number":
            // Home Assistant: a number, or a string that parses as a finite one.
            if case .bool = v { return .value(.bool(false)) }
            return .value(.bool(Self.number(v)?.isFinite ?? false))
        case "iif":
            // value|iif(if_true, if_false, if_none): Home Assistant's immediate if.
            if v.isNull, args.count > 2 { return .value(args[2]) }
            return .value(truthy(.value(v)) ? (args.first ?? .bool(true)) : (args.count > 1 ? args[1] : .bool(false)))
        case "from_json":
            do {
                return .value(try JSONParser.parse(v.templateText))
            } catch {
                throw TemplateError("from_json: \(error)")
            }
        default:  // to_json, tojson
            return .value(.string(v.jsonText))
        }
    }

    func binary(_ op: String, _ a: Value, _ b: Value) throws(TemplateError) -> Value {
        switch op {
        case "==": return .bool(Self.equal(a, b))
        case "!=": return .bool(!Self.equal(a, b))
        case "in":
            switch b {
            case .list(let l): return .bool(l.contains { Self.equal($0, a) })
            case .object(let o): return .bool(o[a.templateText] != nil)
            default: return .bool(b.templateText.contains(a.templateText))
            }
        case "~": return .string(a.templateText + b.templateText)
        default: break
        }
        if op == "+", case .string(let x) = a, case .string(let y) = b { return .string(x + y) }
        guard let x = a.doubleValue, let y = b.doubleValue else {
            throw TemplateError("cannot apply '\(op)' to \(a.kindName) \(a) and \(b.kindName) \(b)")
        }
        switch op {
        case "<": return .bool(x < y)
        case ">": return .bool(x > y)
        case "<=": return .bool(x <= y)
        case ">=": return .bool(x >= y)
        default: break
        }
        let bothInt = a.intValue != nil && b.intValue != nil && { if case .int = a, case .int = b { true } else { false } }()
        switch op {
        case "+": return bothInt ? .int(a.intValue! &+ b.intValue!) : .double(x + y)
        case "-": return bothInt ? .int(a.intValue! &- b.intValue!) : .double(x - y)
        case "*": return bothInt ? .int(a.intValue! &* b.intValue!) : .double(x * y)
        case "/":
            guard y != 0 else { throw TemplateError("division by zero") }
            return .double(x / y)
        case "//":
            guard y != 0 else { throw TemplateError("division by zero") }
            if bothInt, let i = Self.floorDivision(a.intValue!, b.intValue!) { return .int(i) }
            return .double((x / y).rounded(.down))
        case "%":
            guard y != 0 else { throw TemplateError("division by zero") }
            // Python's modulo takes the divisor's sign.
            if bothInt {
                let (r, _) = a.intValue!.remainderReportingOverflow(dividingBy: b.intValue!)
                return .int(r != 0 && (r < 0) != (b.intValue! < 0) ? r + b.intValue! : r)
            }
            return .double(x.truncatingRemainder(dividingBy: y))
        default:  // **
            return .double(pow(x, y))
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
