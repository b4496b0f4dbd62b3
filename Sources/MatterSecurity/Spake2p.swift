import Crypto
import _CryptoExtras

/// SPAKE2+ on P-256 with SHA-256, HKDF and HMAC, as Matter's PASE uses it (Core Specification
/// 3.10, after draft-bar-cfrg-spake2plus-01): the commissioner is the prover, the device the
/// verifier. The verifier holds only (w0, L) — never the passcode or w1.
public enum Spake2p {
    /// The fixed point M of the draft (SEC1 compressed).
    static let m: [UInt8] = hex("02886e2f97ace46e55ba9dd7242579f2993b64e16ef3dcab95afd497333d8fa12f")
    /// The fixed point N of the draft (SEC1 compressed).
    static let n: [UInt8] = hex("03d8bbd6c639c62937b04d997f38c3770719c629d7014d49a24b4f98baa1292b49")

    /// PBKDF2 iteration counts the specification allows (5.1.1.6 / 3.9).
    public static let iterationRange = 1000...100_000
    /// Salt lengths the specification allows.
    public static let saltLengthRange = 16...32

    /// The shared secrets both sides derive (w0, w1 are 32-byte scalars), from the passcode:
    /// PBKDF2-HMAC-SHA256 over the passcode as 4 little-endian bytes, 80 bytes out, each half
    /// reduced modulo the group order.
    /// - Throws: `MatterSecurityError` when the iteration count or salt length is outside what
    ///   the specification allows.
    public static func deriveSecrets(passcode: SetupPasscode, salt: [UInt8], iterations: Int) throws(MatterSecurityError)
        -> (w0: [UInt8], w1: [UInt8])
    {
        guard iterationRange.contains(iterations) else {
            throw .invalidPayload("PBKDF2 iteration count \(iterations) is outside \(iterationRange)")
        }
        guard saltLengthRange.contains(salt.count) else {
            throw .invalidPayload("PBKDF2 salt is \(salt.count) bytes; 16…32 expected")
        }
        let v = passcode.value
        let password: [UInt8] = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
        let ws: [UInt8]
        do {
            let key = try KDF.Insecure.PBKDF2.deriveKey(
                from: password, salt: salt, using: .sha256, outputByteCount: 80, unsafeUncheckedRounds: iterations)
            ws = key.withUnsafeBytes { Array($0) }
        } catch {
            throw .crypto("PBKDF2 failed: \(error)")
        }
        return (try P256Arithmetic.reduce(Array(ws[0..<40])), try P256Arithmetic.reduce(Array(ws[40..<80])))
    }

    /// The 16-byte keys that come out of a completed exchange.
    public struct SharedKeys: Sendable, Hashable {
        /// Ka: the confirmation key material.
        public let ka: [UInt8]
        /// Ke: the shared secret PASE derives its session keys from.
        public let ke: [UInt8]
        /// KcA, KcB: the confirmation MAC keys of prover and verifier.
        public let kcA: [UInt8]
        public let kcB: [UInt8]
    }

    /// TT and the keys of draft-01: Ka‖Ke = SHA-256(TT); KcA‖KcB = HKDF(Ka, "ConfirmationKeys").
    static func keys(
        context: [UInt8], idProver: [UInt8], idVerifier: [UInt8], x: [UInt8], y: [UInt8], z: [UInt8], v: [UInt8], w0: [UInt8]
    ) throws(MatterSecurityError) -> SharedKeys {
        var tt: [UInt8] = []
        func add(_ field: [UInt8]) {
            var length = UInt64(field.count)
            for _ in 0..<8 {
                tt.append(UInt8(length & 0xFF))
                length >>= 8
            }
            tt += field
        }
        add(context)
        add(idProver)
        add(idVerifier)
        add(try P256Arithmetic.validate(m))
        add(try P256Arithmetic.validate(n))
        add(x)
        add(y)
        add(z)
        add(v)
        add(w0)
        let hash = Array(SHA256.hash(data: tt))
        let ka = Array(hash[0..<16]), ke = Array(hash[16..<32])
        let kc = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: ka), info: Array("ConfirmationKeys".utf8), outputByteCount: 32
        ).withUnsafeBytes { Array($0) }
        return SharedKeys(ka: ka, ke: ke, kcA: Array(kc[0..<16]), kcB: Array(kc[16..<32]))
    }

    static func mac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}

/// What the device stores instead of the passcode: w0 and L = w1·G (Matter's 97-byte
/// "Spake2p verifier", w0 ‖ L, as `spake2p gen-verifier` prints it in Base64).
public struct Spake2pVerifier: Sendable, Hashable {
    /// 32-byte scalar.
    public let w0: [UInt8]
    /// 65-byte uncompressed point.
    public let l: [UInt8]

    /// Derives the verifier from a passcode; the passcode and w1 are not kept.
    public init(passcode: SetupPasscode, salt: [UInt8], iterations: Int) throws(MatterSecurityError) {
        let (w0, w1) = try Spake2p.deriveSecrets(passcode: passcode, salt: salt, iterations: iterations)
        self.w0 = w0
        self.l = try P256Arithmetic.multiply(generatorBy: w1)
    }

    /// Reads the 97-byte serialised form.
    /// - Throws: when the length is wrong or L is not a point on P-256.
    public init(serialized bytes: [UInt8]) throws(MatterSecurityError) {
        guard bytes.count == 97 else { throw .invalidPayload("SPAKE2+ verifier is \(bytes.count) bytes; 97 expected") }
        w0 = Array(bytes[0..<32])
        l = try P256Arithmetic.validate(Array(bytes[32..<97]))
    }

    /// w0 ‖ L, 97 bytes.
    public var serialized: [UInt8] { w0 + l }
}

/// The verifier's (device's) side of one SPAKE2+ exchange.
///
/// ```swift
/// var session = try Spake2pVerifierSession(context: ctx, verifier: stored)
/// let (pB, cB) = try session.respond(to: pA)        // Pake1 → Pake2
/// let ke = try session.confirm(cA)                  // Pake3 → Ke
/// ```
public struct Spake2pVerifierSession: Sendable {
    let context: [UInt8]
    let verifier: Spake2pVerifier
    let idProver: [UInt8]
    let idVerifier: [UInt8]
    let y: [UInt8]
    private(set) var keys: Spake2p.SharedKeys?
    private(set) var expectedCA: [UInt8]?

    /// - Parameters:
    ///   - context: for PASE, SHA-256("CHIP PAKE V1 Commissioning" ‖ PBKDFParamRequest ‖ PBKDFParamResponse).
    ///   - randomScalar: y, for test vectors only; random when nil.
    public init(
        context: [UInt8], verifier: Spake2pVerifier, idProver: [UInt8] = [], idVerifier: [UInt8] = [],
        randomScalar: [UInt8]? = nil
    ) throws(MatterSecurityError) {
        self.context = context
        self.verifier = verifier
        self.idProver = idProver
        self.idVerifier = idVerifier
        if let randomScalar {
            self.y = randomScalar
        } else {
            self.y = try P256Arithmetic.randomScalar()
        }
    }

    /// Takes the prover's share pA (X) and returns the verifier's share pB (Y) and its
    /// confirmation cB = HMAC(KcB, X).
    /// - Throws: when X is not a valid point.
    public mutating func respond(to pA: [UInt8]) throws(MatterSecurityError) -> (pB: [UInt8], cB: [UInt8]) {
        let x = try P256Arithmetic.validate(pA)
        let yPoint = try P256Arithmetic.multiply(generatorBy: y, point: Spake2p.n, by: verifier.w0)
        let base = try P256Arithmetic.subtract(x, Spake2p.m, times: verifier.w0)
        let z = try P256Arithmetic.multiply(generatorBy: nil, point: base, by: y)
        let v = try P256Arithmetic.multiply(generatorBy: nil, point: verifier.l, by: y)
        let keys = try Spake2p.keys(
            context: context, idProver: idProver, idVerifier: idVerifier, x: x, y: yPoint, z: z, v: v, w0: verifier.w0)
        self.keys = keys
        expectedCA = Spake2p.mac(key: keys.kcA, yPoint)
        return (yPoint, Spake2p.mac(key: keys.kcB, x))
    }

    /// Checks the prover's confirmation cA and returns Ke.
    /// - Throws: `MatterSecurityError` (verification failed) when cA is wrong — the passcode
    ///   did not match — or when `respond(to:)` has not run.
    public func confirm(_ cA: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        guard let keys, let expectedCA else { throw .protocolViolation("SPAKE2+ confirmation before the shares were exchanged") }
        guard Spake2p.constantTimeEqual(expectedCA, cA) else { throw .verificationFailed("SPAKE2+ confirmation cA does not match") }
        return keys.ke
    }
}

/// The prover's (commissioner's) side: Hearth uses it in tests and for its own initiator.
public struct Spake2pProverSession: Sendable {
    let context: [UInt8]
    let w0: [UInt8]
    let w1: [UInt8]
    let idProver: [UInt8]
    let idVerifier: [UInt8]
    let x: [UInt8]
    /// pA = x·G + w0·M, sent in Pake1.
    public let pA: [UInt8]

    /// - Parameter randomScalar: x, for test vectors only; random when nil.
    public init(
        context: [UInt8], w0: [UInt8], w1: [UInt8], idProver: [UInt8] = [], idVerifier: [UInt8] = [],
        randomScalar: [UInt8]? = nil
    ) throws(MatterSecurityError) {
        self.context = context
        self.w0 = w0
        self.w1 = w1
        self.idProver = idProver
        self.idVerifier = idVerifier
        if let randomScalar {
            x = randomScalar
        } else {
            x = try P256Arithmetic.randomScalar()
        }
        pA = try P256Arithmetic.multiply(generatorBy: x, point: Spake2p.m, by: w0)
    }

    /// Takes pB and cB, checks cB, and returns cA and the shared keys.
    /// - Throws: `MatterSecurityError` (verification failed) when cB is wrong.
    public func finish(pB: [UInt8], cB: [UInt8]) throws(MatterSecurityError) -> (cA: [UInt8], keys: Spake2p.SharedKeys) {
        let y = try P256Arithmetic.validate(pB)
        let base = try P256Arithmetic.subtract(y, Spake2p.n, times: w0)
        let z = try P256Arithmetic.multiply(generatorBy: nil, point: base, by: x)
        let v = try P256Arithmetic.multiply(generatorBy: nil, point: base, by: w1)
        let keys = try Spake2p.keys(context: context, idProver: idProver, idVerifier: idVerifier, x: pA, y: y, z: z, v: v, w0: w0)
        guard Spake2p.constantTimeEqual(Spake2p.mac(key: keys.kcB, pA), cB) else {
            throw .verificationFailed("SPAKE2+ confirmation cB does not match")
        }
        return (Spake2p.mac(key: keys.kcA, y), keys)
    }
}

/// Hex for constants and tests.
func hex(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var high: UInt8?
    for c in text.utf8 {
        let v: UInt8
        switch c {
        case 0x30...0x39: v = c - 0x30
        case 0x61...0x66: v = c - 0x61 + 10
        case 0x41...0x46: v = c - 0x41 + 10
        default: continue
        }
        if let h = high {
            out.append(h << 4 | v)
            high = nil
        } else {
            high = v
        }
    }
    return out
}
