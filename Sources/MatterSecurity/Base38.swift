/// Base38 (Core Specification 5.1.3.1): 3 bytes become 5 characters, a trailing 2 bytes 4, a
/// trailing byte 2; the least significant character first.
enum Base38 {
    static let alphabet: [UInt8] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-.".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            var value: UInt32 = 0
            for j in (0..<n).reversed() { value = value << 8 | UInt32(bytes[i + j]) }
            let chars = n == 3 ? 5 : (n == 2 ? 4 : 2)
            for _ in 0..<chars {
                out.append(alphabet[Int(value % 38)])
                value /= 38
            }
            i += n
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: Substring) throws(MatterSecurityError) -> [UInt8] {
        var values: [UInt32] = []
        for byte in text.utf8 {
            guard let index = alphabet.firstIndex(of: byte) else {
                throw .invalidPayload("QR payload holds a character outside Base38: \(Unicode.Scalar(byte))")
            }
            values.append(UInt32(index))
        }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let n = min(5, values.count - i)
            let bytes: Int
            switch n {
            case 5: bytes = 3
            case 4: bytes = 2
            case 2: bytes = 1
            default: throw .invalidPayload("QR payload length does not fit Base38")
            }
            var value: UInt32 = 0
            for j in (0..<n).reversed() { value = value * 38 + values[i + j] }
            guard value < (1 << (8 * bytes)) else { throw .invalidPayload("QR payload Base38 group out of range") }
            for _ in 0..<bytes {
                out.append(UInt8(value & 0xFF))
                value >>= 8
            }
            i += n
        }
        return out
    }
}
