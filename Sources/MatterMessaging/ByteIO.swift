/// Little-endian byte writing and reading for the message formats (all Matter message fields
/// are little-endian, Matter Core Specification 4.4).
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { le(UInt64(v), 2) }
    mutating func u32(_ v: UInt32) { le(UInt64(v), 4) }
    mutating func u64(_ v: UInt64) { le(v, 8) }
    mutating func append(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    private mutating func le(_ v: UInt64, _ n: Int) {
        var v = v
        for _ in 0..<n {
            bytes.append(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }
}

struct ByteReader {
    let bytes: [UInt8]
    var position: Int

    init(_ bytes: [UInt8], at position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    var remaining: Int { bytes.count - position }

    mutating func u8(_ what: String) throws(MessagingError) -> UInt8 { UInt8(try le(1, what)) }
    mutating func u16(_ what: String) throws(MessagingError) -> UInt16 { UInt16(try le(2, what)) }
    mutating func u32(_ what: String) throws(MessagingError) -> UInt32 { UInt32(try le(4, what)) }
    mutating func u64(_ what: String) throws(MessagingError) -> UInt64 { try le(8, what) }

    mutating func take(_ n: Int, _ what: String) throws(MessagingError) -> [UInt8] {
        guard n >= 0, remaining >= n else {
            throw MessagingError(.malformed, "\(what): needs \(n) byte(s), \(remaining) left")
        }
        defer { position += n }
        return Array(bytes[position..<position + n])
    }

    private mutating func le(_ n: Int, _ what: String) throws(MessagingError) -> UInt64 {
        guard remaining >= n else {
            throw MessagingError(.malformed, "\(what): needs \(n) byte(s), \(remaining) left")
        }
        var v: UInt64 = 0
        for i in 0..<n { v |= UInt64(bytes[position + i]) << UInt64(8 * i) }
        position += n
        return v
    }
}
