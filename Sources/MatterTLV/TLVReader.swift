/// Limits the decoder enforces, so hostile input is refused with an error instead of
/// exhausting memory or the stack.
public struct TLVLimits: Hashable, Sendable {
    /// Deepest nesting of containers (a top-level structure is depth 1).
    public var maxDepth: Int
    /// Longest input accepted, in bytes.
    public var maxInputLength: Int
    /// Longest UTF-8 or octet string accepted, in bytes.
    public var maxStringLength: Int

    public init(maxDepth: Int = 32, maxInputLength: Int = 1 << 20, maxStringLength: Int = 1 << 20) {
        self.maxDepth = maxDepth
        self.maxInputLength = maxInputLength
        self.maxStringLength = maxStringLength
    }

    /// 32 levels, 1 MiB of input, 1 MiB per string.
    public static let `default` = TLVLimits()
}

/// One step of the streaming reader.
public enum TLVToken: Hashable, Sendable {
    /// A scalar element (never a container value).
    case scalar(TLVTag, TLVValue)
    /// The start of a container; its members follow, then `.end`.
    case start(TLVTag, TLVContainerKind)
    /// The end of the innermost open container.
    case end
}

/// Reads Matter TLV token by token, checking every rule of Appendix A as it goes: reserved
/// element types, truncation, tag rules of structures (unique, non-anonymous) and arrays
/// (anonymous), balanced containers, the depth and length limits, valid UTF-8.
///
/// ```swift
/// var r = try TLVReader(bytes)
/// while let token = try r.next() { … }
/// ```
public struct TLVReader: Sendable {
    private let input: [UInt8]
    private var position: Int
    private let limits: TLVLimits
    private struct Open: Sendable {
        var kind: TLVContainerKind
        var tags: Set<TLVTag>
    }
    private var stack: [Open] = []

    /// Starts reading `bytes`; throws `tooLong` if the input exceeds the limits.
    public init(_ bytes: [UInt8], limits: TLVLimits = .default) throws(TLVError) {
        guard bytes.count <= limits.maxInputLength else {
            throw TLVError(.tooLong, "input of \(bytes.count) bytes exceeds the limit of \(limits.maxInputLength)")
        }
        input = bytes
        position = 0
        self.limits = limits
    }

    /// Byte offset of the next token.
    public var offset: Int { position }
    /// How many containers are open.
    public var depth: Int { stack.count }
    /// Whether every byte has been read.
    public var isAtEnd: Bool { position >= input.count }

    /// The next token, or nil at the end of the input (which is an error inside a container).
    public mutating func next() throws(TLVError) -> TLVToken? {
        guard position < input.count else {
            if !stack.isEmpty {
                throw TLVError(.unterminatedContainer, "input ends inside \(stack.count) open container(s)", offset: position)
            }
            return nil
        }
        let start = position
        let control = input[position]
        position += 1
        let type = control & 0x1F
        let tagControl = Int(control >> 5)

        if type == 0x18 {
            guard tagControl == 0 else {
                throw TLVError(.invalidTag, "end-of-container must be anonymous", offset: start)
            }
            guard stack.popLast() != nil else {
                throw TLVError(.unexpectedEndOfContainer, "end-of-container outside any container", offset: start)
            }
            return .end
        }
        guard type <= 0x17 else {
            throw TLVError(.reservedElementType, "reserved element type 0x\(String(type, radix: 16))", offset: start)
        }
        let tag = try readTag(tagControl, at: start)
        try checkTag(tag, at: start)

        switch type {
        case 0x00...0x03:
            let n = 1 << Int(type)
            let raw = try readLE(n, at: start)
            let shift = UInt64(64 - 8 * n)
            let v = Int64(bitPattern: raw << shift) >> Int64(shift)
            return .scalar(tag, .signed(v))
        case 0x04...0x07:
            return .scalar(tag, .unsigned(try readLE(1 << Int(type - 4), at: start)))
        case 0x08: return .scalar(tag, .bool(false))
        case 0x09: return .scalar(tag, .bool(true))
        case 0x0A: return .scalar(tag, .float(Float(bitPattern: UInt32(try readLE(4, at: start)))))
        case 0x0B: return .scalar(tag, .double(Double(bitPattern: try readLE(8, at: start))))
        case 0x0C...0x0F:
            let payload = try readLengthPrefixed(1 << Int(type - 0x0C), at: start)
            guard let s = String(validating: payload, as: UTF8.self) else {
                throw TLVError(.invalidUTF8, "UTF-8 string with tag \(tag) is not valid UTF-8", offset: start)
            }
            return .scalar(tag, .utf8(s))
        case 0x10...0x13:
            return .scalar(tag, .bytes(try readLengthPrefixed(1 << Int(type - 0x10), at: start)))
        case 0x14: return .scalar(tag, .null)
        default:
            let kind: TLVContainerKind = type == 0x15 ? .structure : type == 0x16 ? .array : .list
            guard stack.count < limits.maxDepth else {
                throw TLVError(.tooDeep, "containers nested deeper than \(limits.maxDepth)", offset: start)
            }
            stack.append(Open(kind: kind, tags: []))
            return .start(tag, kind)
        }
    }

    /// Skips the rest of the innermost open container, including its end.
    public mutating func skipContainer() throws(TLVError) {
        let target = stack.count - 1
        guard target >= 0 else { throw TLVError(.unexpectedEndOfContainer, "no open container to skip", offset: position) }
        while stack.count > target {
            guard try next() != nil else { return }
        }
    }

    private mutating func checkTag(_ tag: TLVTag, at start: Int) throws(TLVError) {
        guard let top = stack.indices.last else { return }
        switch stack[top].kind {
        case .structure:
            guard !tag.isAnonymous else {
                throw TLVError(.invalidTag, "structure member without a tag", offset: start)
            }
            guard stack[top].tags.insert(tag).inserted else {
                throw TLVError(.duplicateTag, "tag \(tag) appears twice in one structure", offset: start)
            }
        case .array:
            guard tag.isAnonymous else {
                throw TLVError(.invalidTag, "array member with tag \(tag); array members are anonymous", offset: start)
            }
        case .list:
            break
        }
    }

    private mutating func readTag(_ control: Int, at start: Int) throws(TLVError) -> TLVTag {
        switch control {
        case 0: return .anonymous
        case 1: return .context(UInt8(try readLE(1, at: start)))
        case 2: return .commonProfile(UInt32(try readLE(2, at: start)))
        case 3: return .commonProfile(UInt32(try readLE(4, at: start)))
        case 4: return .implicitProfile(UInt32(try readLE(2, at: start)))
        case 5: return .implicitProfile(UInt32(try readLE(4, at: start)))
        default:
            let vendor = UInt16(try readLE(2, at: start))
            let profile = UInt16(try readLE(2, at: start))
            let tag = UInt32(try readLE(control == 6 ? 2 : 4, at: start))
            return .fullyQualified(vendorID: vendor, profile: profile, tag: tag)
        }
    }

    private mutating func readLE(_ count: Int, at start: Int) throws(TLVError) -> UInt64 {
        guard input.count - position >= count else {
            throw TLVError(.truncated, "element needs \(count) more byte(s), \(input.count - position) left", offset: start)
        }
        var v: UInt64 = 0
        for i in 0..<count {
            v |= UInt64(input[position + i]) << UInt64(8 * i)
        }
        position += count
        return v
    }

    private mutating func readLengthPrefixed(_ lengthSize: Int, at start: Int) throws(TLVError) -> [UInt8] {
        let length = try readLE(lengthSize, at: start)
        guard length <= UInt64(limits.maxStringLength) else {
            throw TLVError(.tooLong, "string of \(length) bytes exceeds the limit of \(limits.maxStringLength)", offset: start)
        }
        let n = Int(length)
        guard input.count - position >= n else {
            throw TLVError(.truncated, "string of \(n) bytes, only \(input.count - position) left", offset: start)
        }
        let payload = Array(input[position..<position + n])
        position += n
        return payload
    }
}

extension TLVElement {
    /// Decodes exactly one element from `bytes`; trailing bytes are an error.
    public init(decoding bytes: [UInt8], limits: TLVLimits = .default) throws(TLVError) {
        var reader = try TLVReader(bytes, limits: limits)
        guard let first = try reader.next() else {
            throw TLVError(.truncated, "empty input", offset: 0)
        }
        self = try TLVElement.build(first, &reader)
        guard reader.isAtEnd else {
            throw TLVError(.trailingBytes, "\(bytes.count - reader.offset) byte(s) after the element", offset: reader.offset)
        }
    }

    /// Decodes a sequence of top-level elements (e.g. a TLV stream that is not one container).
    public static func decodeSequence(_ bytes: [UInt8], limits: TLVLimits = .default) throws(TLVError) -> [TLVElement] {
        var reader = try TLVReader(bytes, limits: limits)
        var out: [TLVElement] = []
        while let token = try reader.next() {
            out.append(try build(token, &reader))
        }
        return out
    }

    /// Reads the next whole element from a reader positioned at a token boundary.
    public static func read(from reader: inout TLVReader) throws(TLVError) -> TLVElement? {
        guard let token = try reader.next() else { return nil }
        if case .end = token { return nil }
        return try build(token, &reader)
    }

    private static func build(_ token: TLVToken, _ reader: inout TLVReader) throws(TLVError) -> TLVElement {
        switch token {
        case .scalar(let tag, let value):
            return TLVElement(tag, value)
        case .end:
            throw TLVError(.unexpectedEndOfContainer, "end-of-container where an element was expected", offset: reader.offset - 1)
        case .start(let tag, let kind):
            var members: [TLVElement] = []
            while true {
                guard let t = try reader.next() else {
                    throw TLVError(.unterminatedContainer, "input ends inside a container", offset: reader.offset)
                }
                if case .end = t { break }
                members.append(try build(t, &reader))
            }
            switch kind {
            case .structure: return TLVElement(tag, .structure(members))
            case .array: return TLVElement(tag, .array(members))
            case .list: return TLVElement(tag, .list(members))
            }
        }
    }
}
