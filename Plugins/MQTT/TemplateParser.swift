import HomeModel
import Foundation

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
        while accept("or") { e = .binary(.or, e, try and()) }
        return e
    }

    mutating func and() throws(TemplateError) -> Expr {
        var e = try not()
        while accept("and") { e = .binary(.and, e, try not()) }
        return e
    }

    mutating func not() throws(TemplateError) -> Expr {
        var negations = 0
        while accept("not") { negations += 1 }
        var e = try comparison()
        for _ in 0..<negations { e = .unary(.not, e) }
        return e
    }

    mutating func comparison() throws(TemplateError) -> Expr {
        var e = try additive()
        while true {
            if let op = operatorAhead(Template.BinaryOperator.comparisons) {
                position += 1
                e = .binary(op, e, try additive())
            } else if accept("in") {
                e = .binary(.in, e, try additive())
            } else if peek == .name("not"), tokens[position + 1] == .name("in") {
                position += 2
                e = .unary(.not, .binary(.in, e, try additive()))
            } else if accept("is") {
                let negated = accept("not")
                guard case .name(let name) = next() else { throw error("expected a test name after 'is'") }
                guard let test = Template.Test(rawValue: name) else {
                    throw error("unsupported test 'is \(name)'")
                }
                e = .test(e, test, negated: negated)
            } else {
                return e
            }
        }
    }

    mutating func additive() throws(TemplateError) -> Expr {
        var e = try multiplicative()
        while let op = operatorAhead(Template.BinaryOperator.additive) {
            position += 1
            e = .binary(op, e, try multiplicative())
        }
        return e
    }

    mutating func multiplicative() throws(TemplateError) -> Expr {
        var e = try unary()
        while let op = operatorAhead(Template.BinaryOperator.multiplicative) {
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
        for _ in 0..<negations { e = .unary(.negate, e) }
        return e
    }

    /// The operator of `candidates` the next token spells, if any.
    func operatorAhead(_ candidates: [Template.BinaryOperator]) -> Template.BinaryOperator? {
        guard case .op(let text) = peek, let op = Template.BinaryOperator(rawValue: text), candidates.contains(op) else { return nil }
        return op
    }

    mutating func filtered() throws(TemplateError) -> Expr {
        var e = try postfix()
        while accept("|") {
            guard case .name(let name) = next() else { throw error("expected a filter name after '|'") }
            guard let filter = Template.Filter(name: name) else {
                throw error("unsupported filter '\(name)' (supported: \(Template.Filter.names.joined(separator: ", ")))")
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
            e = .filter(e, filter, args)
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
                    guard let function = Template.Filter(name: n), Template.Filter.functions.contains(function) else {
                        let names = Template.Filter.functions.map(\.rawValue).sorted().joined(separator: ", ")
                        throw error("unsupported function '\(n)()' (supported: \(names))")
                    }
                    position += 1
                    var args: [Expr] = []
                    if !accept(")") {
                        repeat { args.append(try ternary()) } while accept(",")
                        try expect(")")
                    }
                    guard let first = args.first else { throw error("\(n)() needs an argument") }
                    return .filter(first, function, Array(args.dropFirst()))
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
            return .filter(.literal(.null), .list, items)
        case let t: throw error("unexpected \(describe(t))")
        }
    }
}
