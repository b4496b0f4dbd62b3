public import Crypto
import MatterTLV
import SwiftASN1
import X509

/// Fabric-level identifiers (Core Specification 4.3.2.2 and 2.5.x).
public enum Fabric {
    /// The 64-bit compressed fabric ID: HKDF-SHA256 over the root public key (without its 0x04
    /// prefix), salted with the fabric ID (big-endian), info "CompressedFabric", 8 bytes.
    public static func compressedFabricID(rootPublicKey: [UInt8], fabricID: UInt64) throws(MatterSecurityError) -> UInt64 {
        guard rootPublicKey.count == 65, rootPublicKey[0] == 4 else { throw .certificate("root public key is not an uncompressed P-256 point") }
        let salt = (0..<8).map { UInt8(truncatingIfNeeded: fabricID >> (56 - 8 * UInt64($0))) }
        let out = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: rootPublicKey.dropFirst()), salt: salt, info: Array("CompressedFabric".utf8),
            outputByteCount: 8
        ).withUnsafeBytes { Array($0) }
        return out.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The DNS-SD instance name of an operational node: `<compressed fabric ID>-<node ID>`, 16
    /// upper-case hex digits each.
    public static func operationalInstanceName(compressedFabricID: UInt64, nodeID: UInt64) -> String {
        MatterDistinguishedName.Attribute.hex(compressedFabricID, digits: 16) + "-"
            + MatterDistinguishedName.Attribute.hex(nodeID, digits: 16)
    }

    /// A PKCS#10 CSR (DER) for a new operational key, as the commissioner asks for in
    /// CSRRequest (11.18.6.5). The subject carries nothing the commissioner relies on.
    public static func certificateSigningRequest(for key: P256.Signing.PrivateKey) throws(MatterSecurityError) -> [UInt8] {
        do {
            let csr = try CertificateSigningRequest(
                version: .v1, subject: try DistinguishedName { OrganizationName("CSR") },
                privateKey: Certificate.PrivateKey(key), attributes: CertificateSigningRequest.Attributes(),
                signatureAlgorithm: .ecdsaWithSHA256)
            var serializer = DER.Serializer()
            try serializer.serialize(csr)
            return serializer.serializedBytes
        } catch {
            throw .crypto("CSR could not be made: \(error)")
        }
    }

    /// The public key of a CSR after checking its self-signature.
    public static func publicKey(ofCSR der: [UInt8]) throws(MatterSecurityError) -> P256.Signing.PublicKey {
        do {
            let csr = try CertificateSigningRequest(derEncoded: der)
            guard csr.publicKey.isValidSignature(csr.signature, for: csr), let key = P256.Signing.PublicKey(csr.publicKey) else {
                throw MatterSecurityError.certificate("CSR signature is invalid or its key is not P-256")
            }
            return key
        } catch let error as MatterSecurityError {
            throw error
        } catch {
            throw .certificate("CSR does not parse: \(error)")
        }
    }
}
