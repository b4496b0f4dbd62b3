/// Writes Matter TLV element by element (Matter Core Specification, Appendix A).
///
/// Integers and string lengths use the smallest width that holds them (the canonical form).
/// The writer checks container rules as it goes: structure members need unique, non-anonymous
/// tags, array members must be anonymous, and `finish()` refuses open containers.
///
/// ```swift
/// var w = TLVWriter()
/// try w.structure(.anonymous) { w throws(TLVError) in
///     try w.put(.context(0), unsigned: 42)
///     try w.put(.context(1), string: "Hello!")
/// }
/// let bytes = try w.finish()
/// ```
public struct TLVWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    private struct Open: Sendable {
        var kind: TLVContainerKind
        var tags: Set<TLVTag>
    }
    private var stack: [Open] = []

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// How many containers are open.
    public var depth: Int { stack.count }

    /// The finished encoding; throws `unbalancedWriter` if a container is still open.
    public func finish() throws(TLVError) -> [UInt8] {
        guard stack.isEmpty else {
            throw TLVError(.unbalancedWriter, "\(stack.count) container(s) still open; call endContainer()")
        }
        return bytes
    }

    // MARK: Scalars

    public mutating func put(_ tag: TLVTag, unsigned v: UInt64) throws(TLVError) {
        if v <= 0xFF {
            try head(tag, 0x04); bytes.append(UInt8(v))
        } else if v <= 0xFFFF {
            try head(tag, 0x05); le(v, 2)
        } else if v <= 0xFFFF_FFFF {
            try head(tag, 0x06); le(v, 4)
        } else {
            try head(tag, 0x07); le(v, 8)
        }
    }

    public mutating func put(_ tag: TLVTag, signed v: Int64) throws(TLVError) {
        let u = UInt64(bitPattern: v)
        if v >= Int64(Int8.min) && v <= Int64(Int8.max) {
            try head(tag, 0x00); le(u, 1)
        } else if v >= Int64(Int16.min) && v <= Int64(Int16.max) {
            try head(tag, 0x01); le(u, 2)
        } else if v >= Int64(Int32.min) && v <= Int64(Int32.max) {
            try head(tag, 0x02); le(u, 4)
        } else {
            try head(tag, 0x03); le(u, 8)
        }
    }

    public mutating func put(_ tag: TLVTag, bool v: Bool) throws(TLVError) {
        try head(tag, v ? 0x09 : 0x08)
    }

    public mutating func put(_ tag: TLVTag, float v: Float) throws(TLVError) {
        try head(tag, 0x0A); le(UInt64(v.bitPattern), 4)
    }

    public mutating func put(_ tag: TLVTag, double v: Double) throws(TLVError) {
        try head(tag, 0x0B); le(v.bitPattern, 8)
    }

    public mutating func put(_ tag: TLVTag, string v: String) throws(TLVError) {
        try lengthPrefixed(tag, base: 0x0C, Array(v.utf8))
    }

    public mutating func put(_ tag: TLVTag, bytes v: [UInt8]) throws(TLVError) {
        try lengthPrefixed(tag, base: 0x10, v)
    }

    public mutating func putNull(_ tag: TLVTag) throws(TLVError) {
        try head(tag, 0x14)
    }

    // MARK: Containers

    public mutating func startStructure(_ tag: TLVTag) throws(TLVError) { try start(tag, .structure) }
    public mutating func startArray(_ tag: TLVTag) throws(TLVError) { try start(tag, .array) }
    public mutating func startList(_ tag: TLVTag) throws(TLVError) { try start(tag, .list) }

    public mutating func start(_ tag: TLVTag, _ kind: TLVContainerKind) throws(TLVError) {
        try head(tag, kind.elementType)
        stack.append(Open(kind: kind, tags: []))
    }

    /// Closes the innermost open container.
    public mutating func endContainer() throws(TLVError) {
        guard stack.popLast() != nil else {
            throw TLVError(.unbalancedWriter, "endContainer() without an open container")
        }
        bytes.append(0x18)
    }

    /// Writes a structure whose members `body` writes.
    public mutating func structure(_ tag: TLVTag, _ body: (inout TLVWriter) throws(TLVError) -> Void) throws(TLVError) {
        try start(tag, .structure); try body(&self); try endContainer()
    }

    /// Writes an array whose members `body` writes.
    public mutating func array(_ tag: TLVTag, _ body: (inout TLVWriter) throws(TLVError) -> Void) throws(TLVError) {
        try start(tag, .array); try body(&self); try endContainer()
    }

    /// Writes a list whose members `body` writes.
    public mutating func list(_ tag: TLVTag, _ body: (inout TLVWriter) throws(TLVError) -> Void) throws(TLVError) {
        try start(tag, .list); try body(&self); try endContainer()
    }

    /// Writes a whole element (recursively for containers), with its own tag.
    public mutating func put(_ element: TLVElement) throws(TLVError) {
        try put(element.tag, element.value)
    }

    /// Writes a value under `tag`.
    public mutating func put(_ tag: TLVTag, _ value: TLVValue) throws(TLVError) {
        switch value {
        case .signed(let v): try put(tag, signed: v)
        case .unsigned(let v): try put(tag, unsigned: v)
        case .bool(let v): try put(tag, bool: v)
        case .float(let v): try put(tag, float: v)
        case .double(let v): try put(tag, double: v)
        case .utf8(let v): try put(tag, string: v)
        case .bytes(let v): try put(tag, bytes: v)
        case .null: try putNull(tag)
        case .structure(let m): try start(tag, .structure); for e in m { try put(e) }; try endContainer()
        case .array(let m): try start(tag, .array); for e in m { try put(e) }; try endContainer()
        case .list(let m): try start(tag, .list); for e in m { try put(e) }; try endContainer()
        }
    }

    // MARK: Encoding details

    private mutating func lengthPrefixed(_ tag: TLVTag, base: UInt8, _ payload: [UInt8]) throws(TLVError) {
        let n = UInt64(payload.count)
        if n <= 0xFF {
            try head(tag, base); le(n, 1)
        } else if n <= 0xFFFF {
            try head(tag, base + 1); le(n, 2)
        } else if n <= 0xFFFF_FFFF {
            try head(tag, base + 2); le(n, 4)
        } else {
            try head(tag, base + 3); le(n, 8)
        }
        bytes.append(contentsOf: payload)
    }

    /// Checks the tag against the open container, then writes the control byte and the tag.
    private mutating func head(_ tag: TLVTag, _ type: UInt8) throws(TLVError) {
        if let top = stack.indices.last {
            switch stack[top].kind {
            case .structure:
                guard !tag.isAnonymous else {
                    throw TLVError(.invalidTag, "a structure member needs a tag")
                }
                guard stack[top].tags.insert(tag).inserted else {
                    throw TLVError(.duplicateTag, "tag \(tag) appears twice in one structure")
                }
            case .array:
                guard tag.isAnonymous else {
                    throw TLVError(.invalidTag, "an array member must be anonymous, found tag \(tag)")
                }
            case .list:
                break
            }
        }
        bytes.append(tag.control << 5 | type)
        switch tag {
        case .anonymous: break
        case .context(let t): bytes.append(t)
        case .commonProfile(let t), .implicitProfile(let t): le(UInt64(t), t <= 0xFFFF ? 2 : 4)
        case .fullyQualified(let v, let p, let t):
            le(UInt64(v), 2); le(UInt64(p), 2); le(UInt64(t), t <= 0xFFFF ? 2 : 4)
        }
    }

    private mutating func le(_ v: UInt64, _ count: Int) {
        var v = v
        for _ in 0..<count {
            bytes.append(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }
}

/// The three kinds of TLV container (Appendix A.11).
public enum TLVContainerKind: Hashable, Sendable {
    case structure, array, list

    var elementType: UInt8 {
        switch self {
        case .structure: return 0x15
        case .array: return 0x16
        case .list: return 0x17
        }
    }
}

extension TLVElement {
    /// The TLV encoding of this element (canonical widths; member order as given).
    public func encoded() throws(TLVError) -> [UInt8] {
        var w = TLVWriter()
        try w.put(self)
        return try w.finish()
    }
}
