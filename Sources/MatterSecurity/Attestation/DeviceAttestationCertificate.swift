public import Crypto
public import Foundation
import SwiftASN1
import X509

/// One certificate of a device attestation chain (PAA, PAI or DAC; Core Specification 6.2.2),
/// read from X.509 DER with the fields the attestation rules look at.
public struct DeviceAttestationCertificate: Sendable {
    /// The DER bytes as received.
    public let der: [UInt8]
    /// The Matter vendor ID in the subject (OID 1.3.6.1.4.1.37244.2.1), when present.
    public let vendorID: UInt16?
    /// The Matter product ID in the subject (OID 1.3.6.1.4.1.37244.2.2), when present.
    public let productID: UInt16?
    /// Basic constraints: nil when the extension is missing.
    public let isCA: Bool?
    public let pathLength: Int?
    public let canSignCertificates: Bool
    public let canSignDigitally: Bool
    public let subjectKeyID: [UInt8]?
    public let authorityKeyID: [UInt8]?
    /// The subject public key (65-byte uncompressed point).
    public let publicKeyBytes: [UInt8]
    // swift-crypto's keys are not Sendable: the key is kept as bytes and rebuilt on use.
    public var publicKey: P256.Signing.PublicKey {
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKeyBytes) else {
            preconditionFailure("bytes of a parsed P-256 key no longer load")
        }
        return key
    }
    public let notBefore: Date
    public let notAfter: Date

    let certificate: Certificate

    /// Matter's DN attribute OIDs for the vendor and product IDs (6.2.2.2).
    static let vendorIDOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 37244, 2, 1]
    static let productIDOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 37244, 2, 2]

    /// Parses an attestation certificate.
    /// - Throws: `MatterSecurityError` when the DER does not parse, the key is not P-256, the
    ///   signature algorithm is not ecdsa-with-SHA256, or a VID/PID attribute is not 4 hex digits.
    public init(derEncoded der: [UInt8]) throws(MatterSecurityError) {
        do {
            let certificate = try Certificate(derEncoded: der)
            guard certificate.signatureAlgorithm == .ecdsaWithSHA256 else {
                throw MatterSecurityError.certificate("attestation certificate is not signed with ecdsa-with-SHA256")
            }
            guard let key = P256.Signing.PublicKey(certificate.publicKey) else {
                throw MatterSecurityError.certificate("attestation certificate key is not a P-256 key")
            }
            self.der = der
            self.certificate = certificate
            self.publicKeyBytes = Array(key.x963Representation)
            vendorID = try Self.hexAttribute(certificate.subject, Self.vendorIDOID)
            productID = try Self.hexAttribute(certificate.subject, Self.productIDOID)
            switch try certificate.extensions.basicConstraints {
            case .isCertificateAuthority(let path):
                isCA = true
                pathLength = path
            case .notCertificateAuthority:
                isCA = false
                pathLength = nil
            case nil:
                isCA = nil
                pathLength = nil
            }
            let usage = try certificate.extensions.keyUsage
            canSignCertificates = usage?.keyCertSign ?? false
            canSignDigitally = usage?.digitalSignature ?? false
            subjectKeyID = try certificate.extensions.subjectKeyIdentifier.map { Array($0.keyIdentifier) }
            authorityKeyID = try certificate.extensions.authorityKeyIdentifier?.keyIdentifier.map { Array($0) }
            notBefore = certificate.notValidBefore
            notAfter = certificate.notValidAfter
        } catch let error as MatterSecurityError {
            throw error
        } catch {
            throw .certificate("attestation certificate does not parse: \(error)")
        }
    }

    /// True when `issuer`'s key signed this certificate.
    public func isSigned(by issuer: DeviceAttestationCertificate) -> Bool {
        Certificate.PublicKey(issuer.publicKey).isValidSignature(certificate.signature, for: certificate)
    }

    /// True when the subject DN of `issuer` is this certificate's issuer DN.
    func isIssued(by issuer: DeviceAttestationCertificate) -> Bool { certificate.issuer == issuer.certificate.subject }

    public func isValid(at date: Date) -> Bool { notBefore <= date && date <= notAfter }

    private static func hexAttribute(_ name: DistinguishedName, _ oid: ASN1ObjectIdentifier) throws -> UInt16? {
        var found: UInt16?
        for rdn in name {
            for attribute in rdn where attribute.type == oid {
                guard found == nil else { throw MatterSecurityError.certificate("the subject carries \(oid) twice") }
                guard let text = String(attribute.value), text.count == 4, text.allSatisfy({ $0.isHexDigit && !$0.isLowercase }), let value = UInt16(text, radix: 16) else {
                    throw MatterSecurityError.certificate("the subject's \(oid) is not 4 upper-case hex digits")
                }
                found = value
            }
        }
        return found
    }

    // MARK: Issuing

    /// Issues a DAC (6.2.2.3): subject CN + VID + PID, not a CA, digitalSignature only, SKID and
    /// AKID, signed by the PAI's key with ecdsa-with-SHA256.
    ///
    /// - Parameters:
    ///   - issuerCertificate: the PAI (DER); its subject becomes the DAC's issuer.
    ///   - notAfter: nil for "no well-defined expiration" (9999-12-31T23:59:59Z).
    /// - Returns: the DAC as X.509 DER.
    public static func issue(
        commonName: String, vendorID: UInt16, productID: UInt16, publicKey: P256.Signing.PublicKey, serialNumber: [UInt8],
        notBefore: Date, notAfter: Date?, issuerCertificate: [UInt8], issuerKey: P256.Signing.PrivateKey
    ) throws(MatterSecurityError) -> [UInt8] {
        let issuer = try DeviceAttestationCertificate(derEncoded: issuerCertificate)
        guard let issuerSKID = issuer.subjectKeyID else { throw .certificate("the issuer has no subject key identifier") }
        guard issuer.publicKey.rawRepresentation == issuerKey.publicKey.rawRepresentation else {
            throw .certificate("the issuer key does not belong to the issuer certificate")
        }
        do {
            let subject = DistinguishedName([
                RelativeDistinguishedName(.init(type: .RDNAttributeType.commonName, utf8String: commonName)),
                RelativeDistinguishedName(.init(type: vendorIDOID, utf8String: hex4(vendorID))),
                RelativeDistinguishedName(.init(type: productIDOID, utf8String: hex4(productID))),
            ])
            let skid = MatterCertificate.keyIdentifier(Array(publicKey.x963Representation))
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(keyIdentifier: skid[...])
                AuthorityKeyIdentifier(keyIdentifier: issuerSKID[...])
            }
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(bytes: serialNumber), publicKey: .init(publicKey),
                notValidBefore: notBefore, notValidAfter: notAfter ?? Date(timeIntervalSince1970: 253_402_300_799),
                issuer: issuer.certificate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions, issuerPrivateKey: .init(issuerKey))
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        } catch {
            throw .certificate("the DAC could not be issued: \(error)")
        }
    }

    static func hex4(_ v: UInt16) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
