extension TLVElement: CustomStringConvertible {
    /// A compact, readable rendering: `{0 = 42U, 1 = -17, 2 = "Hi", 3 = [1U, 2U]}`.
    public var description: String {
        let body = value.description
        return tag.isAnonymous ? body : "\(tag) = \(body)"
    }
}

extension TLVValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .signed(let v): return "\(v)"
        case .unsigned(let v): return "\(v)U"
        case .bool(let v): return "\(v)"
        case .float(let v): return "\(v)f"
        case .double(let v): return "\(v)"
        case .utf8(let v): return "\"\(v)\""
        case .bytes(let v): return "h'" + v.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + "'"
        case .null: return "null"
        case .structure(let m): return "{" + m.map(\.description).joined(separator: ", ") + "}"
        case .array(let m): return "[" + m.map(\.description).joined(separator: ", ") + "]"
        case .list(let m): return "[[" + m.map(\.description).joined(separator: ", ") + "]]"
        }
    }
}
