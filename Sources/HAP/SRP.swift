public import BigInt
public import Crypto
import Foundation

/// An SRP group (RFC 5054 appendix A): the safe prime N and the generator g.
public struct SRPGroup: Sendable, Hashable {
    public let N: BigUInt
    public let g: BigUInt
    /// Bytes of N: the width A, B, g and S are padded to.
    public let byteCount: Int
    /// Montgomery arithmetic modulo N (N is an odd safe prime).
    let field: MontgomeryField

    public init(N: BigUInt, g: BigUInt) {
        self.N = N
        self.g = g
        byteCount = (N.bitWidth - N.leadingZeroBitCount + 7) / 8
        guard let field = MontgomeryField(modulus: N) else { preconditionFailure("an SRP group's N is an odd prime") }
        self.field = field
    }

    /// base^exponent mod N.
    func power(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt { field.power(base, exponent) }

    /// RFC 5054's 1024-bit group (g = 2): the one its test vectors use.
    public static let rfc5054_1024 = SRPGroup(N: BigUInt(hex: """
        EEAF0AB9ADB38DD69C33F80AFA8FC5E86072618775FF3C0B9EA2314C9C256576D674DF7496EA81D3383B4813D692C6E0E0D5D8E250B98BE4\
        8E495C1D6089DAD15DC7D7B46154D6B6CE8EF4AD69B15D4982559B297BCF1885C529F566660E57EC68EDBC3C05726CC02FD4CBF4976EAA9A\
        FD5138FE8376435B9FC61D2FC0EB06E3
        """), g: 2)

    /// RFC 5054's 3072-bit group (g = 5): HAP pair-setup's (HAP R2 section 5.6).
    public static let rfc5054_3072 = SRPGroup(N: BigUInt(hex: """
        FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B\
        302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE6\
        49286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D\
        670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF695581718\
        3995497CEA956AE515D2261898FA051015728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7D\
        B3970F85A6E1E4C7ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C\
        BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF
        """), g: 5)

    /// The number as exactly `byteCount` big-endian bytes (RFC 5054's PAD()).
    public func pad(_ n: BigUInt) -> [UInt8] {
        let raw = Array(n.serialize())
        return raw.count >= byteCount ? Array(raw.suffix(byteCount)) : [UInt8](repeating: 0, count: byteCount - raw.count) + raw
    }
}

extension BigUInt {
    /// From hex digits (whitespace and line breaks ignored); used for the groups' constants.
    init(hex: String) {
        let digits = hex.filter { $0.isHexDigit }
        self = BigUInt(digits, radix: 16)!
    }

    init(bytes: some Collection<UInt8>) { self.init(Data(bytes)) }

    var bytes: [UInt8] { Array(serialize()) }
}

/// The server ("host", HAP's accessory) side of SRP-6a (RFC 5054 section 2; RFC 2945), over any
/// hash: SHA-1 for RFC 5054's test vectors, SHA-512 with the 3072-bit group for HAP.
///
/// Padding as RFC 5054 and HAP controllers use it: k = H(N | PAD(g)), u = H(PAD(A) | PAD(B)),
/// K = H(PAD(S)), M1 = H(H(N) xor H(g) | H(I) | s | PAD(A) | PAD(B) | K), M2 = H(PAD(A) | M1 | K)
/// (H(g) over g's minimal bytes).
///
/// ```swift
/// var srp = SRPServer<SHA512>(group: .rfc5054_3072, username: "Pair-Setup", password: "031-45-154",
///                             salt: salt, secret: b)
/// send(srp.publicKey)                          // B
/// let m2 = try srp.verify(clientPublicKey: A, proof: m1)   // throws on a wrong password
/// srp.sessionKey                               // K, for HKDF
/// ```
public struct SRPServer<H: HashFunction>: Sendable {
    /// Why the client's message is refused.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    public let group: SRPGroup
    public let username: [UInt8]
    public let salt: [UInt8]
    let b: BigUInt
    /// The verifier v = g^x mod N.
    public let verifier: BigUInt
    /// k = H(N | PAD(g)).
    public let multiplier: BigUInt
    /// B = (k·v + g^b) mod N.
    public let publicKeyValue: BigUInt
    /// K = H(PAD(S)), once the client's proof was checked.
    public private(set) var sessionKey: [UInt8]?

    /// - Parameters:
    ///   - salt: at least 16 random bytes (HAP: exactly 16).
    ///   - secret: b, the server's random secret (32 random bytes or more).
    public init(group: SRPGroup, username: some Collection<UInt8>, password: some Collection<UInt8>, salt: [UInt8], secret: [UInt8]) {
        self.group = group
        self.username = Array(username)
        self.salt = salt
        b = BigUInt(bytes: secret)
        let x = Self.privateKey(salt: salt, username: Array(username), password: Array(password))
        verifier = group.power(group.g, x)
        multiplier = BigUInt(bytes: Self.hash(group.N.bytes, group.pad(group.g))) % group.N
        publicKeyValue = (multiplier * verifier + group.power(group.g, b)) % group.N
    }

    public init(group: SRPGroup, username: String, password: String, salt: [UInt8], secret: [UInt8]) {
        self.init(group: group, username: Array(username.utf8), password: Array(password.utf8), salt: salt, secret: secret)
    }

    /// x = H(s | H(I ":" P)).
    static func privateKey(salt: [UInt8], username: [UInt8], password: [UInt8]) -> BigUInt {
        BigUInt(bytes: hash(salt, hash(username, Array(":".utf8), password)))
    }

    static func hash(_ parts: [UInt8]...) -> [UInt8] {
        var h = H()
        for p in parts { h.update(data: p) }
        return Array(h.finalize())
    }

    /// B, padded to the group's width (what the server sends).
    public var publicKey: [UInt8] { group.pad(publicKeyValue) }

    /// u = H(PAD(A) | PAD(B)).
    public func scrambler(clientPublicKey A: BigUInt) -> BigUInt {
        BigUInt(bytes: Self.hash(group.pad(A), group.pad(publicKeyValue)))
    }

    /// S = (A · v^u)^b mod N.
    /// - Throws: ``Failure`` when A mod N is 0 (RFC 5054 section 2.5.4) or u is 0.
    public func premasterSecret(clientPublicKey A: BigUInt) throws(Failure) -> BigUInt {
        guard A % group.N != 0 else { throw Failure(message: "SRP: the client's public key is 0 mod N") }
        let u = scrambler(clientPublicKey: A)
        guard u != 0 else { throw Failure(message: "SRP: u is 0") }
        return group.power((A % group.N) * group.power(verifier, u), b)
    }

    /// Checks the client's proof M1 and returns the server's proof M2.
    /// - Throws: ``Failure`` when the proof is wrong (a wrong password) or A is invalid.
    public mutating func verify(clientPublicKey: [UInt8], proof: [UInt8]) throws(Failure) -> [UInt8] {
        let A = BigUInt(bytes: clientPublicKey)
        let S = try premasterSecret(clientPublicKey: A)
        let K = Self.hash(group.pad(S))
        let hN = Self.hash(group.N.bytes)
        let hg = Self.hash(group.g.bytes)
        let hGroup = zip(hN, hg).map { $0 ^ $1 }
        let m1 = Self.hash(hGroup, Self.hash(username), salt, group.pad(A), publicKey, K)
        guard Self.constantTimeEqual(m1, proof) else { throw Failure(message: "SRP: the client's proof is wrong (wrong setup code)") }
        sessionKey = K
        return Self.hash(group.pad(A), m1, K)
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for (x, y) in zip(a, b) { diff |= x ^ y }
        return diff == 0
    }
}

/// The client side, for tests and benchmarks (a controller in process).
public struct SRPClient<H: HashFunction>: Sendable {
    public let group: SRPGroup
    let a: BigUInt
    public let publicKeyValue: BigUInt

    public init(group: SRPGroup, secret: [UInt8]) {
        self.group = group
        a = BigUInt(bytes: secret)
        publicKeyValue = group.power(group.g, a)
    }

    public var publicKey: [UInt8] { group.pad(publicKeyValue) }

    /// M1 and K for the server's salt and B, given the password.
    public func proof(username: [UInt8], password: [UInt8], salt: [UInt8], serverPublicKey: [UInt8]) -> (proof: [UInt8], key: [UInt8], premaster: BigUInt) {
        let N = group.N
        let B = BigUInt(bytes: serverPublicKey)
        let k = BigUInt(bytes: SRPServer<H>.hash(N.bytes, group.pad(group.g))) % N
        let u = BigUInt(bytes: SRPServer<H>.hash(group.pad(publicKeyValue), group.pad(B)))
        let x = SRPServer<H>.privateKey(salt: salt, username: username, password: password)
        let v = group.power(group.g, x)
        let kv = (k * v) % N
        let base = (B + N - kv) % N
        let S = group.power(base, a + u * x)
        let K = SRPServer<H>.hash(group.pad(S))
        let hGroup = zip(SRPServer<H>.hash(N.bytes), SRPServer<H>.hash(group.g.bytes)).map { $0 ^ $1 }
        let m1 = SRPServer<H>.hash(hGroup, SRPServer<H>.hash(username), salt, publicKey, group.pad(B), K)
        return (m1, K, S)
    }
}
