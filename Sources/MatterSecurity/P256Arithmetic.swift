import CCryptoBoringSSL

/// Raw P-256 point and scalar arithmetic for SPAKE2+, on the BoringSSL that swift-crypto vendors
/// (swift-crypto has no public API for adding points). Linux only: on Apple platforms Crypto
/// does not build BoringSSL.
///
/// Points cross this boundary as SEC1 bytes (65-byte uncompressed, or 33-byte compressed on
/// input); scalars as 32-byte big-endian numbers below the group order.
enum P256Arithmetic {
    static let scalarLength = 32
    static let pointLength = 65

    private static var group: OpaquePointer { CCryptoBoringSSL_EC_group_p256() }

    /// `bytes` (any length) reduced modulo the group order n.
    static func reduce(_ bytes: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        try withContext { ctx throws(MatterSecurityError) in
            let value = try bignum(bytes)
            defer { CCryptoBoringSSL_BN_free(value) }
            guard CCryptoBoringSSL_BN_nnmod(value, value, CCryptoBoringSSL_EC_GROUP_get0_order(group), ctx) == 1 else {
                throw .crypto("P-256 scalar reduction failed")
            }
            return try serialize(value)
        }
    }

    /// A uniformly random scalar in 1…n-1.
    static func randomScalar() throws(MatterSecurityError) -> [UInt8] {
        guard let value = CCryptoBoringSSL_BN_new() else { throw .crypto("out of memory") }
        defer { CCryptoBoringSSL_BN_free(value) }
        guard CCryptoBoringSSL_BN_rand_range_ex(value, 1, CCryptoBoringSSL_EC_GROUP_get0_order(group)) == 1 else {
            throw .crypto("P-256 random scalar failed")
        }
        return try serialize(value)
    }

    /// `a`·G + `b`·`q` (either term may be left out), uncompressed.
    static func multiply(generatorBy a: [UInt8]?, point q: [UInt8]? = nil, by b: [UInt8]? = nil) throws(MatterSecurityError) -> [UInt8] {
        try withContext { ctx throws(MatterSecurityError) in
            let result = try newPoint()
            defer { CCryptoBoringSSL_EC_POINT_free(result) }
            let aBN = try a.map { bytes throws(MatterSecurityError) in try bignum(bytes) }
            defer { if let aBN { CCryptoBoringSSL_BN_free(aBN) } }
            let bBN = try b.map { bytes throws(MatterSecurityError) in try bignum(bytes) }
            defer { if let bBN { CCryptoBoringSSL_BN_free(bBN) } }
            let qPoint = try q.map { bytes throws(MatterSecurityError) in try point(bytes) }
            defer { if let qPoint { CCryptoBoringSSL_EC_POINT_free(qPoint) } }
            guard CCryptoBoringSSL_EC_POINT_mul(group, result, aBN, qPoint, bBN, ctx) == 1 else {
                throw .crypto("P-256 multiplication failed")
            }
            return try serialize(result)
        }
    }

    /// `p` − `k`·`q`, uncompressed.
    static func subtract(_ p: [UInt8], _ q: [UInt8], times k: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        try withContext { ctx throws(MatterSecurityError) in
            let pPoint = try point(p)
            defer { CCryptoBoringSSL_EC_POINT_free(pPoint) }
            let qPoint = try point(q)
            defer { CCryptoBoringSSL_EC_POINT_free(qPoint) }
            let kBN = try bignum(k)
            defer { CCryptoBoringSSL_BN_free(kBN) }
            let product = try newPoint()
            defer { CCryptoBoringSSL_EC_POINT_free(product) }
            guard CCryptoBoringSSL_EC_POINT_mul(group, product, nil, qPoint, kBN, ctx) == 1,
                CCryptoBoringSSL_EC_POINT_invert(group, product, ctx) == 1,
                CCryptoBoringSSL_EC_POINT_add(group, product, pPoint, product, ctx) == 1
            else { throw .crypto("P-256 subtraction failed") }
            return try serialize(product)
        }
    }

    /// `bytes` parsed as a point on the curve, re-encoded uncompressed.
    /// - Throws: when the bytes are not a valid point (or are the point at infinity).
    static func validate(_ bytes: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        let p = try point(bytes)
        defer { CCryptoBoringSSL_EC_POINT_free(p) }
        return try serialize(p)
    }

    // MARK: - BoringSSL plumbing

    private static func withContext<T>(_ body: (OpaquePointer) throws(MatterSecurityError) -> T) throws(MatterSecurityError) -> T {
        guard let ctx = CCryptoBoringSSL_BN_CTX_new() else { throw .crypto("out of memory") }
        defer { CCryptoBoringSSL_BN_CTX_free(ctx) }
        return try body(ctx)
    }

    private static func bignum(_ bytes: [UInt8]) throws(MatterSecurityError) -> UnsafeMutablePointer<BIGNUM> {
        guard let value = bytes.withUnsafeBufferPointer({ CCryptoBoringSSL_BN_bin2bn($0.baseAddress, $0.count, nil) }) else {
            throw .crypto("out of memory")
        }
        return value
    }

    private static func serialize(_ value: UnsafeMutablePointer<BIGNUM>) throws(MatterSecurityError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: scalarLength)
        guard out.withUnsafeMutableBufferPointer({ CCryptoBoringSSL_BN_bn2bin_padded($0.baseAddress, $0.count, value) }) == 1 else {
            throw .crypto("P-256 scalar does not fit in 32 bytes")
        }
        return out
    }

    private static func newPoint() throws(MatterSecurityError) -> OpaquePointer {
        guard let p = CCryptoBoringSSL_EC_POINT_new(group) else { throw .crypto("out of memory") }
        return p
    }

    private static func point(_ bytes: [UInt8]) throws(MatterSecurityError) -> OpaquePointer {
        let p = try newPoint()
        let ok = bytes.withUnsafeBufferPointer { CCryptoBoringSSL_EC_POINT_oct2point(group, p, $0.baseAddress, $0.count, nil) }
        guard ok == 1, CCryptoBoringSSL_EC_POINT_is_at_infinity(group, p) == 0 else {
            CCryptoBoringSSL_EC_POINT_free(p)
            throw .crypto("not a point on P-256")
        }
        return p
    }

    private static func serialize(_ p: OpaquePointer) throws(MatterSecurityError) -> [UInt8] {
        guard CCryptoBoringSSL_EC_POINT_is_at_infinity(group, p) == 0 else { throw .crypto("P-256 result is the point at infinity") }
        var out = [UInt8](repeating: 0, count: pointLength)
        let n = out.withUnsafeMutableBufferPointer {
            CCryptoBoringSSL_EC_POINT_point2oct(group, p, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, $0.count, nil)
        }
        guard n == pointLength else { throw .crypto("P-256 point serialisation failed") }
        return out
    }
}
