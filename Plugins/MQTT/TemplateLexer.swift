import HomeModel
import Foundation

// MARK: - Lexing

/// Splits one `{{ … }}` or `{% … %}` body into tokens (at most ``Template/maximumTokens``).
extension TemplateParser {
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
