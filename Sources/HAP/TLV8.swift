/// HAP's TLV8 (HAP specification R2, section 12.1): a sequence of items, each one byte of type,
/// one byte of length and up to 255 bytes of value. A value longer than 255 bytes is split into
/// consecutive fragments of the same type; an item of another type (commonly the zero-length
/// ``TLV8/Kind/separator``) ends it.
///
/// ```swift
/// var tlv = TLV8()
/// tlv.append(.state, [2])
/// tlv.append(.publicKey, publicKeyBytes)      // 384 bytes: two fragments on the wire
/// let bytes = tlv.encoded()
/// let back = try TLV8(decoding: bytes)
/// back[.publicKey]                            // the 384 bytes again
/// ```
public struct TLV8: Hashable, Sendable {
    /// The item types pairing uses (HAP R2, table 5-6).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let method = Kind(rawValue: 0x00)
        public static let identifier = Kind(rawValue: 0x01)
        public static let salt = Kind(rawValue: 0x02)
        public static let publicKey = Kind(rawValue: 0x03)
        public static let proof = Kind(rawValue: 0x04)
        public static let encryptedData = Kind(rawValue: 0x05)
        public static let state = Kind(rawValue: 0x06)
        public static let error = Kind(rawValue: 0x07)
        public static let retryDelay = Kind(rawValue: 0x08)
        public static let certificate = Kind(rawValue: 0x09)
        public static let signature = Kind(rawValue: 0x0A)
        public static let permissions = Kind(rawValue: 0x0B)
        public static let fragmentData = Kind(rawValue: 0x0C)
        public static let fragmentLast = Kind(rawValue: 0x0D)
        public static let flags = Kind(rawValue: 0x13)
        public static let separator = Kind(rawValue: 0xFF)

        public var description: String { "0x" + String(rawValue, radix: 16) }
    }

    /// Why bytes are not TLV8.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The items in order, fragments already joined.
    public private(set) var items: [(kind: Kind, value: [UInt8])]

    public init() { items = [] }

    public init(_ items: [(Kind, [UInt8])]) {
        self.items = items.map { (kind: $0.0, value: $0.1) }
    }

    /// Decodes bytes, joining fragments.
    /// - Throws: ``DecodingError`` when an item's length runs past the end.
    public init(decoding bytes: some Collection<UInt8>) throws(DecodingError) {
        let b = Array(bytes)
        var items: [(kind: Kind, value: [UInt8])] = []
        var i = 0
        var previousWasFull = false
        while i < b.count {
            guard i + 2 <= b.count else { throw DecodingError(message: "TLV8: a lone type byte at offset \(i)") }
            let kind = Kind(rawValue: b[i])
            let length = Int(b[i + 1])
            guard i + 2 + length <= b.count else {
                throw DecodingError(message: "TLV8: item of type \(kind) at offset \(i) claims \(length) bytes, \(b.count - i - 2) remain")
            }
            let value = b[(i + 2)..<(i + 2 + length)]
            if previousWasFull, let last = items.last, last.kind == kind {
                items[items.count - 1].value.append(contentsOf: value)
            } else {
                items.append((kind: kind, value: Array(value)))
            }
            previousWasFull = length == 255
            i += 2 + length
        }
        self.items = items
    }

    /// Adds an item (split into fragments when encoded, if longer than 255 bytes).
    public mutating func append(_ kind: Kind, _ value: some Collection<UInt8>) {
        items.append((kind: kind, value: Array(value)))
    }

    public mutating func append(_ kind: Kind, byte: UInt8) {
        items.append((kind: kind, value: [byte]))
    }

    /// The first item of this type.
    public subscript(kind: Kind) -> [UInt8]? {
        items.first { $0.kind == kind }?.value
    }

    /// The first item of this type as one byte (State, Method, Error, Permissions).
    public func byte(_ kind: Kind) -> UInt8? {
        guard let v = self[kind], v.count == 1 else { return nil }
        return v[0]
    }

    /// The items split at separators (a pairing list).
    public func groups() -> [TLV8] {
        var out: [TLV8] = []
        var current = TLV8()
        for item in items {
            if item.kind == .separator {
                out.append(current)
                current = TLV8()
            } else {
                current.items.append(item)
            }
        }
        if !current.items.isEmpty || out.isEmpty { out.append(current) }
        return out
    }

    /// The wire form: fragments of at most 255 bytes; an empty value as a zero-length item.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(items.reduce(0) { $0 + $1.value.count + 2 })
        for item in items {
            if item.value.isEmpty {
                out.append(item.kind.rawValue)
                out.append(0)
                continue
            }
            var start = 0
            while start < item.value.count {
                let end = min(start + 255, item.value.count)
                out.append(item.kind.rawValue)
                out.append(UInt8(end - start))
                out.append(contentsOf: item.value[start..<end])
                start = end
            }
        }
        return out
    }

    public static func == (a: TLV8, b: TLV8) -> Bool {
        a.items.count == b.items.count && zip(a.items, b.items).allSatisfy { $0.kind == $1.kind && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for item in items {
            hasher.combine(item.kind)
            hasher.combine(item.value)
        }
    }
}
