/// The value of one Matter TLV element (Matter Core Specification, Appendix A.7 "Element
/// Type Field"). Containers hold their members as `TLVElement`s.
///
/// Integers keep their signedness but not their encoded width: the encoder writes the
/// smallest width that holds the value, as the canonical encoding asks.
public enum TLVValue: Hashable, Sendable {
    case signed(Int64)
    case unsigned(UInt64)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case utf8(String)
    case bytes([UInt8])
    case null
    /// Members must carry non-anonymous, unique tags.
    case structure([TLVElement])
    /// Members must be anonymous.
    case array([TLVElement])
    /// Members may be tagged or anonymous, in a meaningful order.
    case list([TLVElement])
}

/// One Matter TLV element: a tag and a value.
///
/// ```swift
/// let s = TLVElement.structure([.init(.context(0), .unsigned(42)), .init(.context(1), .signed(-17))])
/// let bytes = try s.encoded()                      // 15 24 00 2a 20 01 ef 18
/// let back = try TLVElement(decoding: bytes)
/// let n = try back.member(.context(0)).uint()      // 42
/// ```
public struct TLVElement: Hashable, Sendable {
    public var tag: TLVTag
    public var value: TLVValue

    public init(_ tag: TLVTag, _ value: TLVValue) {
        self.tag = tag
        self.value = value
    }

    /// An anonymous element.
    public init(_ value: TLVValue) {
        self.tag = .anonymous
        self.value = value
    }

    /// A tagged structure.
    public static func structure(_ tag: TLVTag, _ members: [TLVElement]) -> TLVElement { TLVElement(tag, .structure(members)) }
    /// An anonymous structure.
    public static func structure(_ members: [TLVElement]) -> TLVElement { TLVElement(.anonymous, .structure(members)) }
    /// A tagged array.
    public static func array(_ tag: TLVTag, _ members: [TLVElement]) -> TLVElement { TLVElement(tag, .array(members)) }
    /// An anonymous array.
    public static func array(_ members: [TLVElement]) -> TLVElement { TLVElement(.anonymous, .array(members)) }
    /// A tagged list.
    public static func list(_ tag: TLVTag, _ members: [TLVElement]) -> TLVElement { TLVElement(tag, .list(members)) }
    /// An anonymous list.
    public static func list(_ members: [TLVElement]) -> TLVElement { TLVElement(.anonymous, .list(members)) }
}

// MARK: - Reading values

extension TLVElement {
    /// The members of a structure, array or list; nil for a scalar.
    public var members: [TLVElement]? {
        switch value {
        case .structure(let m), .array(let m), .list(let m): return m
        default: return nil
        }
    }

    /// Whether this is a structure, array or list.
    public var isContainer: Bool { members != nil }

    /// The first member with this tag, if this is a container that has one.
    public subscript(tag: TLVTag) -> TLVElement? {
        members?.first { $0.tag == tag }
    }

    /// The member with context tag `n`, if any.
    public subscript(context n: UInt8) -> TLVElement? { self[.context(n)] }

    /// The member with this tag, or a `missingMember` error.
    public func member(_ tag: TLVTag) throws(TLVError) -> TLVElement {
        guard let m = members else { throw TLVError(.typeMismatch, "expected a container, found \(value.kindName)") }
        guard let found = m.first(where: { $0.tag == tag }) else {
            throw TLVError(.missingMember, "no member with tag \(tag)")
        }
        return found
    }

    /// An unsigned integer, or `typeMismatch`.
    public func uint() throws(TLVError) -> UInt64 {
        guard case .unsigned(let v) = value else { throw mismatch("an unsigned integer") }
        return v
    }

    /// An unsigned integer that must fit in `T`, or `typeMismatch` / `outOfRange`.
    public func uint<T: FixedWidthInteger & UnsignedInteger>(as _: T.Type) throws(TLVError) -> T {
        let v = try uint()
        guard let t = T(exactly: v) else { throw TLVError(.outOfRange, "\(v) does not fit in \(T.self)") }
        return t
    }

    /// A signed integer, or `typeMismatch`.
    public func int() throws(TLVError) -> Int64 {
        guard case .signed(let v) = value else { throw mismatch("a signed integer") }
        return v
    }

    /// A signed integer that must fit in `T`, or `typeMismatch` / `outOfRange`.
    public func int<T: FixedWidthInteger & SignedInteger>(as _: T.Type) throws(TLVError) -> T {
        let v = try int()
        guard let t = T(exactly: v) else { throw TLVError(.outOfRange, "\(v) does not fit in \(T.self)") }
        return t
    }

    /// A boolean, or `typeMismatch`.
    public func bool() throws(TLVError) -> Bool {
        guard case .bool(let v) = value else { throw mismatch("a boolean") }
        return v
    }

    /// A UTF-8 string, or `typeMismatch`.
    public func string() throws(TLVError) -> String {
        guard case .utf8(let v) = value else { throw mismatch("a UTF-8 string") }
        return v
    }

    /// An octet string, or `typeMismatch`.
    public func bytes() throws(TLVError) -> [UInt8] {
        guard case .bytes(let v) = value else { throw mismatch("an octet string") }
        return v
    }

    /// A single- or double-precision float as a Double, or `typeMismatch`.
    public func double() throws(TLVError) -> Double {
        switch value {
        case .double(let v): return v
        case .float(let v): return Double(v)
        default: throw mismatch("a floating point number")
        }
    }

    /// Whether the value is null.
    public var isNull: Bool {
        if case .null = value { return true }
        return false
    }

    private func mismatch(_ expected: String) -> TLVError {
        TLVError(.typeMismatch, "expected \(expected) at tag \(tag), found \(value.kindName)")
    }
}

extension TLVValue {
    /// A short name of the kind of value, for messages.
    public var kindName: String {
        switch self {
        case .signed: return "signed integer"
        case .unsigned: return "unsigned integer"
        case .bool: return "boolean"
        case .float: return "float"
        case .double: return "double"
        case .utf8: return "UTF-8 string"
        case .bytes: return "octet string"
        case .null: return "null"
        case .structure: return "structure"
        case .array: return "array"
        case .list: return "list"
        }
    }
}
