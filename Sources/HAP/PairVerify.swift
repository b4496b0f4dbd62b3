public import Crypto
import Foundation

/// The keys of a verified session (HAP R2 5.7.2): HKDF-SHA512 of the X25519 shared secret,
/// salt "Control-Salt".
public struct SessionKeys: Sendable {
    // Raw bytes: swift-crypto's SymmetricKey is not Sendable on Linux.
    /// Accessory → controller ("Control-Read-Encryption-Key").
    let accessoryToController: [UInt8]
    /// Controller → accessory ("Control-Write-Encryption-Key").
    let controllerToAccessory: [UInt8]

    public init(sharedSecret: [UInt8]) {
        accessoryToController = HAPCrypto.bytes(HAPCrypto.hkdf(sharedSecret, salt: "Control-Salt", info: "Control-Read-Encryption-Key"))
        controllerToAccessory = HAPCrypto.bytes(HAPCrypto.hkdf(sharedSecret, salt: "Control-Salt", info: "Control-Write-Encryption-Key"))
    }
}

/// Pair-verify on one connection (HAP R2 5.7): M1 (controller's X25519 key) → M2 (ours, signed
/// and encrypted), M3 (controller's identifier and signature) → M4, then the session keys.
public struct PairVerify: Sendable {
    enum Step {
        case idle
        case awaitingM3(shared: [UInt8], ours: [UInt8], theirs: [UInt8], key: [UInt8])
    }

    var step: Step = .idle

    public init() {}

    public enum Outcome: Sendable {
        case progressed
        case refused(String)
        case verified(controller: String, keys: SessionKeys)
    }

    /// One `POST /pair-verify` message.
    public mutating func handle(_ request: TLV8, server: PairingServer, ephemeral: Curve25519.KeyAgreement.PrivateKey = .init()) -> (TLV8, Outcome) {
        let refuse: (UInt8, TLVError, String) -> (TLV8, Outcome) = { state, code, why in
            (TLV8([(.state, [state]), (.error, [code.rawValue])]), .refused(why))
        }
        switch (request.byte(.state), step) {
        case (1, _):
            guard let theirs = request[.publicKey], let theirKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: theirs) else {
                step = .idle
                return refuse(2, .authentication, "pair-verify M1: no valid X25519 public key")
            }
            guard let secret = try? ephemeral.sharedSecretFromKeyAgreement(with: theirKey) else {
                step = .idle
                return refuse(2, .authentication, "pair-verify M1: key agreement failed")
            }
            let shared = secret.withUnsafeBytes { Array($0) }
            let ours = Array(ephemeral.publicKey.rawRepresentation)
            let ownID = Array(server.identity.pairingID.utf8)
            guard let signature = try? server.identity.signingKey.signature(for: ours + ownID + theirs) else {
                return refuse(2, .unknown, "pair-verify M2: signing failed")
            }
            let key = HAPCrypto.hkdf(shared, salt: "Pair-Verify-Encrypt-Salt", info: "Pair-Verify-Encrypt-Info")
            let sub = TLV8([(.identifier, ownID), (.signature, Array(signature))])
            let sealed = HAPCrypto.seal(sub.encoded(), key: key, nonce: HAPCrypto.nonce(label: "PV-Msg02"))
            step = .awaitingM3(shared: shared, ours: ours, theirs: theirs, key: HAPCrypto.bytes(key))
            return (TLV8([(.state, [2]), (.publicKey, ours), (.encryptedData, sealed)]), .progressed)
        case (3, .awaitingM3(let shared, let ours, let theirs, let key)):
            step = .idle
            guard let sealed = request[.encryptedData], let plain = HAPCrypto.open(sealed, key: SymmetricKey(data: key), nonce: HAPCrypto.nonce(label: "PV-Msg03")),
                  let sub = try? TLV8(decoding: plain), let idBytes = sub[.identifier], let signature = sub[.signature],
                  let id = String(bytes: idBytes, encoding: .utf8)
            else { return refuse(4, .authentication, "pair-verify M3: cannot decrypt or parse") }
            guard let pairing = server.pairing(id) else { return refuse(4, .authentication, "pair-verify M3: \(id) is not paired") }
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: pairing.publicKey),
                  key.isValidSignature(signature, for: theirs + idBytes + ours)
            else { return refuse(4, .authentication, "pair-verify M3: \(id)'s signature does not verify") }
            return (TLV8([(.state, [4])]), .verified(controller: id, keys: SessionKeys(sharedSecret: shared)))
        case (let s, _):
            step = .idle
            return refuse((s ?? 0) &+ 1, .unknown, "pair-verify: unexpected state \(s.map(String.init) ?? "none")")
        }
    }
}

/// HAP's encrypted framing after pair-verify (HAP R2 6.5.2): each frame is a 2-byte
/// little-endian length (at most 1024) as additional authenticated data, that many bytes of
/// ChaCha20-Poly1305 ciphertext and a 16-byte tag; nonces are 64-bit little-endian counters,
/// one per direction, starting at 0.
public struct SecureFraming: Sendable {
    public static let maxFrame = 1024

    /// Why incoming bytes are refused (the connection is then closed).
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    let sendKey: [UInt8]
    let receiveKey: [UInt8]
    public private(set) var sent: UInt64 = 0
    public private(set) var received: UInt64 = 0

    /// The accessory's side.
    public init(accessory keys: SessionKeys) {
        sendKey = keys.accessoryToController
        receiveKey = keys.controllerToAccessory
    }

    /// The controller's side (tests).
    public init(controller keys: SessionKeys) {
        sendKey = keys.controllerToAccessory
        receiveKey = keys.accessoryToController
    }

    /// Seals a message as frames of at most 1024 plaintext bytes.
    public mutating func seal(_ plain: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        repeat {
            let end = min(start + Self.maxFrame, plain.count)
            let aad: [UInt8] = [UInt8((end - start) & 0xFF), UInt8((end - start) >> 8)]
            out += aad
            out += HAPCrypto.seal(Array(plain[start..<end]), key: SymmetricKey(data: sendKey), nonce: HAPCrypto.nonce(counter: sent), aad: aad)
            sent += 1
            start = end
        } while start < plain.count
        return out
    }

    /// Opens every complete frame at the front of `buffer` (removing them) and returns their
    /// plaintext; an incomplete frame stays for later.
    /// - Throws: ``Failure`` for a length over 1024 or a frame that does not authenticate.
    public mutating func open(_ buffer: inout [UInt8]) throws(Failure) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while buffer.count - offset >= 2 {
            let length = Int(buffer[offset]) | Int(buffer[offset + 1]) << 8
            guard length <= Self.maxFrame else { throw Failure(message: "encrypted frame of \(length) bytes (at most \(Self.maxFrame))") }
            guard buffer.count - offset >= 2 + length + 16 else { break }
            let aad = Array(buffer[offset..<(offset + 2)])
            let sealed = Array(buffer[(offset + 2)..<(offset + 2 + length + 16)])
            guard let plain = HAPCrypto.open(sealed, key: SymmetricKey(data: receiveKey), nonce: HAPCrypto.nonce(counter: received), aad: aad) else {
                throw Failure(message: "encrypted frame \(received) does not authenticate")
            }
            received += 1
            out += plain
            offset += 2 + length + 16
        }
        buffer.removeFirst(offset)
        return out
    }
}
