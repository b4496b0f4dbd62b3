import Crypto
import _CryptoExtras
import Foundation

/// Random secrets, their SHA-256 for storage, and password hashes (PBKDF2-HMAC-SHA256).
enum AccessSecrets {
    /// `count` random bytes from the system's cryptographically secure generator.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// A bearer token: a prefix that says what it is, then 256 random bits.
    static func newToken(prefix: String) -> String { prefix + "_" + hex(randomBytes(32)) }

    /// A short ID for rows (not a secret).
    static func newID(prefix: String) -> String { prefix + "-" + hex(randomBytes(6)) }

    /// A one-time setup code a person can type: `ABCD-EFGH`, without look-alike letters.
    static func newSetupCode() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let chars = randomBytes(8).map { alphabet[Int($0) % alphabet.count] }
        return String(chars[0..<4]) + "-" + String(chars[4..<8])
    }

    /// Setup codes are compared without case or dashes.
    static func normaliseSetupCode(_ code: String) -> String {
        code.uppercased().filter { $0.isLetter || $0.isNumber }
    }

    /// The SHA-256 of a secret, hex: what the database keeps instead of the secret.
    static func sha256(_ secret: String) -> String { hex(SHA256.hash(data: Data(secret.utf8))) }

    /// `pbkdf2-sha256$<rounds>$<salt hex>$<hash hex>`.
    static func hashPassword(_ password: String, rounds: Int) throws -> String {
        let salt = randomBytes(16)
        let key = try derive(password, salt: salt, rounds: rounds)
        return "pbkdf2-sha256$\(rounds)$\(hex(salt))$\(hex(key))"
    }

    /// Whether `password` matches a stored hash (compared in constant time).
    static func verifyPassword(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 4, parts[0] == "pbkdf2-sha256", let rounds = Int(parts[1]),
            let salt = bytes(fromHex: parts[2]), let expected = bytes(fromHex: parts[3]),
            let key = try? derive(password, salt: salt, rounds: rounds)
        else { return false }
        return constantTimeEqual(key, expected)
    }

    static func derive(_ password: String, salt: [UInt8], rounds: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Array($0) }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }

    static func bytes(fromHex s: String) -> [UInt8]? {
        guard s.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            guard let b = UInt8(s[i..<j], radix: 16) else { return nil }
            out.append(b)
            i = j
        }
        return out
    }
}
