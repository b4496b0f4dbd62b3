/// Swift names from the specification's names.
enum Naming {
    /// Words of a spec name: `On/Off Plug-in Unit` → `On`, `Off`, `Plug`, `in`, `Unit`.
    static func words(_ name: String) -> [String] {
        name.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map(String.init)
    }

    /// A type name: `On/Off Plug-in Unit` → `OnOffPlugInUnit`, `Smoke CO Alarm` → `SmokeCOAlarm`.
    static func typeName(_ name: String) -> String {
        words(name).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// A member name from an UpperCamel spec name: `OnOff` → `onOff`, `PINCode` → `pinCode`,
    /// `COState` → `coState`, `PIN` → `pin`, `UserID` → `userID`.
    static func memberName(_ name: String) -> String {
        let joined = typeName(name)
        let chars = Array(joined)
        var upperRun = 0
        while upperRun < chars.count, chars[upperRun].isUppercase || (upperRun > 0 && chars[upperRun].isNumber) {
            upperRun += 1
        }
        if upperRun == 0 { return joined }
        let lowerCount: Int
        if upperRun == chars.count {
            lowerCount = upperRun
        } else if upperRun == 1 {
            lowerCount = 1
        } else {
            // `PINCode`: the last capital starts the next word.
            lowerCount = chars[upperRun].isLowercase ? upperRun - 1 : upperRun
        }
        return String(chars[..<lowerCount]).lowercased() + String(chars[lowerCount...])
    }

    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
        "inout", "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public",
        "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
        "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
        "throw", "switch", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self",
        "super", "throws", "true", "try", "Type", "Protocol",
    ]

    /// The name as written in declarations and references, escaped when it is a keyword.
    static func escaped(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }

    /// A Swift string literal.
    static func literal(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
