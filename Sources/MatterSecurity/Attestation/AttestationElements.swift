public import Crypto
import MatterTLV

/// The attestation elements a device returns in AttestationResponse (Core Specification
/// 11.18.4.7): the signed CD, the controller's 32-byte nonce, a timestamp and optional firmware
/// information, as a TLV structure of at most 900 bytes.
public struct AttestationElements: Hashable, Sendable {
    public var certificationDeclaration: [UInt8]
    public var attestationNonce: [UInt8]
    public var timestamp: UInt32
    public var firmwareInformation: [UInt8]?

    public static let maximumLength = 900

    public init(certificationDeclaration: [UInt8], attestationNonce: [UInt8], timestamp: UInt32, firmwareInformation: [UInt8]? = nil) {
        self.certificationDeclaration = certificationDeclaration
        self.attestationNonce = attestationNonce
        self.timestamp = timestamp
        self.firmwareInformation = firmwareInformation
    }

    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        guard attestationNonce.count == 32 else { throw .invalidPayload("the attestation nonce must be 32 bytes") }
        var m: [TLVElement] = [
            .init(.context(1), .bytes(certificationDeclaration)), .init(.context(2), .bytes(attestationNonce)),
            .init(.context(3), .unsigned(UInt64(timestamp))),
        ]
        if let firmwareInformation { m.append(.init(.context(4), .bytes(firmwareInformation))) }
        let bytes = try tlv { () throws(TLVError) in try TLVElement.structure(m).encoded() }
        guard bytes.count <= Self.maximumLength else { throw .invalidPayload("attestation elements exceed \(Self.maximumLength) bytes") }
        return bytes
    }

    /// Reads attestation elements; vendor-reserved members (fully-qualified tags) are skipped.
    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        guard bytes.count <= Self.maximumLength else { throw .invalidPayload("attestation elements exceed \(Self.maximumLength) bytes") }
        let s = try TLVElement.decodeStructure(bytes, "attestation elements")
        certificationDeclaration = try s.octets(1)
        attestationNonce = try s.octets(2, length: 32)
        timestamp = try tlv { () throws(TLVError) in try s.member(.context(3)).uint(as: UInt32.self) }
        firmwareInformation = s[context: 4] == nil ? nil : try s.octets(4)
    }

    /// The attestation signature (11.18.4.7): ECDSA-SHA256 with the DAC key over
    /// attestation_elements ‖ attestation_challenge, as the 64-byte r ‖ s.
    public static func sign(_ elements: [UInt8], attestationChallenge: [UInt8], with key: P256.Signing.PrivateKey)
        throws(MatterSecurityError) -> [UInt8]
    {
        guard attestationChallenge.count == 16 else { throw .invalidPayload("the attestation challenge must be 16 bytes") }
        do { return Array(try key.signature(for: elements + attestationChallenge).rawRepresentation) } catch {
            throw .crypto("attestation signature failed: \(error)")
        }
    }

    /// True when `signature` is the DAC key's signature over elements ‖ challenge.
    public static func isValidSignature(_ signature: [UInt8], elements: [UInt8], attestationChallenge: [UInt8], key: P256.Signing.PublicKey) -> Bool {
        guard signature.count == 64, let s = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(s, for: elements + attestationChallenge)
    }
}
