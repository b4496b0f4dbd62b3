import CCryptoBoringSSL

/// AES-128-CCM with Matter's parameters (13-byte nonce, 16-byte tag) for the sealed parts of
/// CASE (TBEData2/3 and the resumption MICs), on the BoringSSL swift-crypto vendors.
///
/// MatterMessaging has the same primitive for messages (`AESCCMKey`); this one stays here so
/// that MatterSecurity does not depend on the message layer.
enum CASEAEAD {
    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        try withContext(key) { ctx throws(MatterSecurityError) in
            var out = [UInt8](repeating: 0, count: plaintext.count + 16)
            var length = 0
            let ok = out.withUnsafeMutableBufferPointer { o in
                plaintext.withUnsafeBufferPointer { p in
                    nonce.withUnsafeBufferPointer { n in
                        CCryptoBoringSSL_EVP_AEAD_CTX_seal(ctx, o.baseAddress, &length, o.count, n.baseAddress, n.count,
                                                           p.baseAddress, p.count, nil, 0)
                    }
                }
            }
            guard ok == 1 else { throw .crypto("AES-CCM seal failed") }
            return Array(out.prefix(length))
        }
    }

    static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        try withContext(key) { ctx throws(MatterSecurityError) in
            var out = [UInt8](repeating: 0, count: sealed.count)
            var length = 0
            let ok = out.withUnsafeMutableBufferPointer { o in
                sealed.withUnsafeBufferPointer { s in
                    nonce.withUnsafeBufferPointer { n in
                        CCryptoBoringSSL_EVP_AEAD_CTX_open(ctx, o.baseAddress, &length, o.count, n.baseAddress, n.count,
                                                           s.baseAddress, s.count, nil, 0)
                    }
                }
            }
            guard ok == 1 else {
                CCryptoBoringSSL_ERR_clear_error()
                throw .verificationFailed("CASE: a sealed part does not authenticate")
            }
            return Array(out.prefix(length))
        }
    }

    private static func withContext<T>(_ key: [UInt8], _ body: (UnsafeMutablePointer<EVP_AEAD_CTX>) throws(MatterSecurityError) -> T)
        throws(MatterSecurityError) -> T
    {
        guard key.count == 16, let ctx = CCryptoBoringSSL_EVP_AEAD_CTX_new(CCryptoBoringSSL_EVP_aead_aes_128_ccm_matter(), key, key.count, 16)
        else { throw .crypto("AES-CCM key setup failed") }
        defer { CCryptoBoringSSL_EVP_AEAD_CTX_free(ctx) }
        return try body(ctx)
    }
}
