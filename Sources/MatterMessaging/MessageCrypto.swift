import CCryptoBoringSSL
public import Crypto

/// AES-128-CCM with a 16-byte tag and a 13-byte nonce (Matter Core Specification 3.6
/// "Crypto_AEAD_GenerateEncrypt"), and AES-CTR keyed the same way for privacy obfuscation
/// (3.7 "Crypto_Privacy_Encrypt").
///
/// swift-crypto has no public AES-CCM; this uses its vendored BoringSSL's
/// `EVP_aead_aes_128_ccm_matter` (M = 16, L = 2), which is Linux-only (see
/// shared/design/exposure.md).
public final class AESCCMKey: @unchecked Sendable {
    // @unchecked: the context is set up once in init and only read afterwards; BoringSSL's
    // seal/open take it as `const` and are safe to call from several threads.
    private let context: UnsafeMutablePointer<EVP_AEAD_CTX>
    /// The raw key (16 bytes).
    public let keyBytes: [UInt8]

    public static let tagLength = 16
    public static let nonceLength = 13

    /// - Throws: `invalidKey` unless `key` is 16 bytes.
    public init(_ key: [UInt8]) throws(MessagingError) {
        guard key.count == 16 else { throw MessagingError(.invalidKey, "an AES-128 key has 16 bytes, got \(key.count)") }
        keyBytes = key
        context = .allocate(capacity: 1)
        let ok = key.withUnsafeBufferPointer {
            CCryptoBoringSSL_EVP_AEAD_CTX_init(context, CCryptoBoringSSL_EVP_aead_aes_128_ccm_matter(), $0.baseAddress, 16, 16, nil)
        }
        guard ok == 1 else {
            context.deallocate()
            throw MessagingError(.invalidKey, "BoringSSL refused the AES-CCM key")
        }
    }

    /// A key from swift-crypto's `SymmetricKey` (e.g. HKDF output).
    public convenience init(_ key: SymmetricKey) throws(MessagingError) {
        try self.init(key.withUnsafeBytes { Array($0) })
    }

    deinit {
        CCryptoBoringSSL_EVP_AEAD_CTX_cleanup(context)
        context.deallocate()
    }

    /// Encrypts `plaintext` and returns ciphertext followed by the 16-byte tag.
    public func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8] {
        precondition(nonce.count == Self.nonceLength, "AES-CCM nonce must be 13 bytes")
        var out = [UInt8](repeating: 0, count: plaintext.count + Self.tagLength)
        var outLength = 0
        let ok = out.withUnsafeMutableBufferPointer { o in
            plaintext.withUnsafeBufferPointer { p in
                nonce.withUnsafeBufferPointer { n in
                    aad.withUnsafeBufferPointer { a in
                        CCryptoBoringSSL_EVP_AEAD_CTX_seal(context, o.baseAddress, &outLength, o.count, n.baseAddress, n.count,
                                                           p.baseAddress, p.count, a.baseAddress, a.count)
                    }
                }
            }
        }
        precondition(ok == 1 && outLength == out.count, "AES-CCM seal failed")
        return out
    }

    /// Decrypts ciphertext-with-tag; throws `authenticationFailed` if the tag does not match.
    public func open(_ sealed: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(MessagingError) -> [UInt8] {
        guard sealed.count >= Self.tagLength, nonce.count == Self.nonceLength else {
            throw MessagingError(.malformed, "sealed message shorter than its tag")
        }
        var out = [UInt8](repeating: 0, count: sealed.count)
        var outLength = 0
        let ok = out.withUnsafeMutableBufferPointer { o in
            sealed.withUnsafeBufferPointer { s in
                nonce.withUnsafeBufferPointer { n in
                    aad.withUnsafeBufferPointer { a in
                        CCryptoBoringSSL_EVP_AEAD_CTX_open(context, o.baseAddress, &outLength, o.count, n.baseAddress, n.count,
                                                           s.baseAddress, s.count, a.baseAddress, a.count)
                    }
                }
            }
        }
        guard ok == 1 else {
            CCryptoBoringSSL_ERR_clear_error()
            throw MessagingError(.authenticationFailed, "message integrity check failed")
        }
        return Array(out.prefix(outLength))
    }

    /// AES-CTR with CCM's counter blocks (flags 0x01, nonce, counter from 1): the keystream
    /// CCM uses for its payload, so it is CCM encryption without the tag. Its own inverse.
    public func ctr(_ data: [UInt8], nonce: [UInt8]) -> [UInt8] {
        Array(seal(data, nonce: nonce, aad: []).prefix(data.count))
    }
}

/// The nonces and derived keys of message security (4.8).
public enum MessageSecurity {
    /// The AES-CCM nonce (4.8.1.1): security flags ‖ message counter (LE) ‖ source node ID (LE).
    public static func nonce(securityFlags: UInt8, counter: UInt32, sourceNodeID: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 13)
        w.u8(securityFlags)
        w.u32(counter)
        w.u64(sourceNodeID)
        return w.bytes
    }

    /// The privacy nonce (4.9.2): session ID (big-endian) ‖ MIC bytes 5…15.
    public static func privacyNonce(sessionID: UInt16, mic: ArraySlice<UInt8>) -> [UInt8] {
        [UInt8(sessionID >> 8), UInt8(truncatingIfNeeded: sessionID)] + Array(mic.dropFirst(5).prefix(11))
    }

    /// The privacy key: HKDF-SHA256(encryption key, salt empty, info "PrivacyKey", 16 bytes).
    public static func privacyKey(for encryptionKey: [UInt8]) throws(MessagingError) -> AESCCMKey {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: encryptionKey), salt: [UInt8](),
                                         info: Array("PrivacyKey".utf8), outputByteCount: 16)
        return try AESCCMKey(key)
    }
}
