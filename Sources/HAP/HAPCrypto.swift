import Crypto
import Foundation

/// The key derivations and AEAD HAP uses (HAP R2 sections 5.6–5.7): HKDF-SHA512 with fixed
/// salt/info strings, ChaCha20-Poly1305 with 12-byte nonces of 4 zero bytes and an 8-byte label
/// ("PS-Msg05") or a little-endian counter.
enum HAPCrypto {
    static func hkdf(_ secret: some DataProtocol, salt: String, info: String, count: Int = 32) -> SymmetricKey {
        HKDF<SHA512>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Array(secret)), salt: Array(salt.utf8), info: Array(info.utf8), outputByteCount: count)
    }

    static func bytes(_ key: SymmetricKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    static func nonce(label: String) -> ChaChaPoly.Nonce {
        try! ChaChaPoly.Nonce(data: [0, 0, 0, 0] + Array(label.utf8))
    }

    static func nonce(counter: UInt64) -> ChaChaPoly.Nonce {
        var n: [UInt8] = [0, 0, 0, 0]
        withUnsafeBytes(of: counter.littleEndian) { n.append(contentsOf: $0) }
        return try! ChaChaPoly.Nonce(data: n)
    }

    /// ciphertext | tag.
    static func seal(_ plain: [UInt8], key: SymmetricKey, nonce: ChaChaPoly.Nonce, aad: [UInt8] = []) -> [UInt8] {
        let box = try! ChaChaPoly.seal(plain, using: key, nonce: nonce, authenticating: aad)
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// Opens ciphertext | tag; nil when it does not authenticate.
    static func open(_ sealed: [UInt8], key: SymmetricKey, nonce: ChaChaPoly.Nonce, aad: [UInt8] = []) -> [UInt8]? {
        guard sealed.count >= 16 else { return nil }
        guard let box = try? ChaChaPoly.SealedBox(nonce: nonce, ciphertext: sealed.dropLast(16), tag: sealed.suffix(16)) else { return nil }
        return (try? ChaChaPoly.open(box, using: key, authenticating: aad)).map { Array($0) }
    }
}
