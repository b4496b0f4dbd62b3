public import Crypto
import Foundation

/// A paired controller (HAP R2 section 5.10): its pairing identifier, Ed25519 long-term public
/// key and whether it is an admin (may add, remove and list pairings).
public struct Pairing: Hashable, Sendable, Codable {
    public var identifier: String
    public var publicKey: [UInt8]
    public var isAdmin: Bool

    public init(identifier: String, publicKey: [UInt8], isAdmin: Bool) {
        self.identifier = identifier
        self.publicKey = publicKey
        self.isAdmin = isAdmin
    }
}

/// The accessory's own long-term identity: its pairing identifier (a MAC-like "AA:BB:…"),
/// Ed25519 signing key, and the setup code controllers pair with.
public struct AccessoryIdentity: Sendable {
    public var pairingID: String
    /// The Ed25519 private key's raw bytes (swift-crypto's key type is not Sendable on Linux).
    public var signingKeyBytes: [UInt8]
    public var signingKey: Curve25519.Signing.PrivateKey { try! Curve25519.Signing.PrivateKey(rawRepresentation: signingKeyBytes) }
    /// "XXX-XX-XXX".
    public var setupCode: String
    /// Four characters, for the setup hash (`sh`) and the X-HM:// URI.
    public var setupID: String

    public init(pairingID: String, signingKey: Curve25519.Signing.PrivateKey, setupCode: String, setupID: String) {
        self.pairingID = pairingID
        signingKeyBytes = Array(signingKey.rawRepresentation)
        self.setupCode = setupCode
        self.setupID = setupID
    }

    /// A fresh identity: random pairing ID, key, setup code (not one of the trivial codes
    /// HAP R2 section 5.6.2 forbids) and setup ID.
    public static func generate() -> AccessoryIdentity {
        var rng = SystemRandomNumberGenerator()
        let id = (0..<6).map { _ in String(format: "%02X", UInt8.random(in: 0...255, using: &rng)) }.joined(separator: ":")
        var code: String
        repeat {
            let digits = (0..<8).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) }
            code = String(digits[0..<3]) + "-" + String(digits[3..<5]) + "-" + String(digits[5..<8])
        } while !isAllowedSetupCode(code)
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let setupID = String((0..<4).map { _ in alphabet.randomElement(using: &rng)! })
        return AccessoryIdentity(pairingID: id, signingKey: .init(), setupCode: code, setupID: setupID)
    }

    /// HAP R2 5.6.2: "XXX-XX-XXX", not all one digit, not 123-45-678 or 876-54-321.
    public static func isAllowedSetupCode(_ code: String) -> Bool {
        let digits = code.filter(\.isNumber)
        guard code.count == 10, digits.count == 8, Array(code)[3] == "-", Array(code)[6] == "-" else { return false }
        if Set(digits).count == 1 { return false }
        return digits != "12345678" && digits != "87654321"
    }

    /// The `sh` TXT value: base64 of the first 4 bytes of SHA-512(setupID | pairingID).
    public var setupHash: String {
        let digest = Array(SHA512.hash(data: Array((setupID + pairingID).utf8)))
        return Data(digest.prefix(4)).base64EncodedString()
    }

    /// The X-HM:// setup payload (what the QR code carries), for a category (2 = bridge).
    public func setupURI(category: Int) -> String {
        let code = UInt64(setupCode.filter(\.isNumber)) ?? 0
        // bits: version(3)=0 | reserved(4)=0 | category(8) | flags(4: 2 = IP) | code(27)
        let payload = (UInt64(category & 0xFF) << 31) | (UInt64(2) << 27) | (code & 0x7FF_FFFF)
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        var n = payload
        var out: [Character] = []
        for _ in 0..<9 {
            out.append(alphabet[Int(n % 36)])
            n /= 36
        }
        return "X-HM://" + String(out.reversed()) + setupID
    }
}

/// Where pairings (and the accessory's identity) survive a restart. HAPBridge implements it
/// on SQLite; tests use ``MemoryPairingStore``.
public protocol PairingStore: Sendable {
    func loadPairings() throws -> [Pairing]
    func savePairing(_ pairing: Pairing) throws
    func removePairing(identifier: String) throws
    /// Unsuccessful pair-setup attempts so far (HAP R2 5.6: refuse after 100).
    func loadFailedAttempts() throws -> Int
    func saveFailedAttempts(_ count: Int) throws
}

/// Pairings in memory, for tests.
public final class MemoryPairingStore: PairingStore, @unchecked Sendable {
    // Guarded by `lock`: small synchronous state.
    let lock = NSLock()
    var pairings: [String: Pairing] = [:]
    var attempts = 0

    public init(_ pairings: [Pairing] = []) {
        for p in pairings { self.pairings[p.identifier] = p }
    }

    public func loadPairings() throws -> [Pairing] { lock.withLock { pairings.values.sorted { $0.identifier < $1.identifier } } }
    public func savePairing(_ pairing: Pairing) throws { lock.withLock { pairings[pairing.identifier] = pairing } }
    public func removePairing(identifier: String) throws { _ = lock.withLock { pairings.removeValue(forKey: identifier) } }
    public func loadFailedAttempts() throws -> Int { lock.withLock { attempts } }
    public func saveFailedAttempts(_ count: Int) throws { lock.withLock { attempts = count } }
}

/// TLV error codes (HAP R2 table 5-5).
public enum TLVError: UInt8, Error, Sendable {
    case unknown = 1
    case authentication = 2
    case backoff = 3
    case maxPeers = 4
    case maxTries = 5
    case unavailable = 6
    case busy = 7
}
