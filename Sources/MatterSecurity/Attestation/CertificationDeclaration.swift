public import Crypto
import MatterTLV
import SwiftASN1

/// A Certification Declaration (Core Specification 6.3.1): the CSA's statement that a vendor's
/// products are certified, as Matter TLV, carried inside a CMS SignedData (RFC 5652) signed by
/// a CD signing key.
public struct CertificationDeclaration: Hashable, Sendable {
    /// certification_type (6.3.1): 0 development and test, 1 provisional, 2 official.
    public enum CertificationType: UInt8, Sendable {
        case developmentAndTest = 0
        case provisional = 1
        case official = 2
    }

    public var formatVersion: UInt8 = 1
    public var vendorID: UInt16
    public var productIDs: [UInt16]
    public var deviceTypeID: UInt32
    public var certificateID: String
    public var securityLevel: UInt8
    public var securityInformation: UInt16
    public var versionNumber: UInt16
    public var certificationType: CertificationType
    public var dacOriginVendorID: UInt16?
    public var dacOriginProductID: UInt16?
    /// SKIDs of the PAAs a DAC chain must end at, when the CD restricts them.
    public var authorizedPAAs: [[UInt8]]?

    public init(
        vendorID: UInt16, productIDs: [UInt16], deviceTypeID: UInt32, certificateID: String, securityLevel: UInt8,
        securityInformation: UInt16, versionNumber: UInt16, certificationType: CertificationType,
        dacOriginVendorID: UInt16? = nil, dacOriginProductID: UInt16? = nil, authorizedPAAs: [[UInt8]]? = nil
    ) {
        self.vendorID = vendorID
        self.productIDs = productIDs
        self.deviceTypeID = deviceTypeID
        self.certificateID = certificateID
        self.securityLevel = securityLevel
        self.securityInformation = securityInformation
        self.versionNumber = versionNumber
        self.certificationType = certificationType
        self.dacOriginVendorID = dacOriginVendorID
        self.dacOriginProductID = dacOriginProductID
        self.authorizedPAAs = authorizedPAAs
    }

    // MARK: TLV

    /// The CD as Matter TLV (the CMS eContent).
    public func tlvEncoded() throws(MatterSecurityError) -> [UInt8] {
        var m: [TLVElement] = [
            .init(.context(0), .unsigned(UInt64(formatVersion))),
            .init(.context(1), .unsigned(UInt64(vendorID))),
            .array(.context(2), productIDs.map { TLVElement(.unsigned(UInt64($0))) }),
            .init(.context(3), .unsigned(UInt64(deviceTypeID))),
            .init(.context(4), .utf8(certificateID)),
            .init(.context(5), .unsigned(UInt64(securityLevel))),
            .init(.context(6), .unsigned(UInt64(securityInformation))),
            .init(.context(7), .unsigned(UInt64(versionNumber))),
            .init(.context(8), .unsigned(UInt64(certificationType.rawValue))),
        ]
        if let dacOriginVendorID { m.append(.init(.context(9), .unsigned(UInt64(dacOriginVendorID)))) }
        if let dacOriginProductID { m.append(.init(.context(10), .unsigned(UInt64(dacOriginProductID)))) }
        if let authorizedPAAs { m.append(.array(.context(11), authorizedPAAs.map { TLVElement(.bytes($0)) })) }
        return try tlv { () throws(TLVError) in try TLVElement.structure(m).encoded() }
    }

    /// Reads the CD TLV.
    public init(tlv bytes: [UInt8]) throws(MatterSecurityError) {
        let s = try TLVElement.decodeStructure(bytes, "certification declaration")
        func u<T: FixedWidthInteger & UnsignedInteger>(_ n: UInt8, _: T.Type) throws(MatterSecurityError) -> T {
            try tlv { () throws(TLVError) in try s.member(.context(n)).uint(as: T.self) }
        }
        formatVersion = try u(0, UInt8.self)
        vendorID = try u(1, UInt16.self)
        productIDs = try tlv { () throws(TLVError) in
            guard case .array(let items) = try s.member(.context(2)).value else { throw TLVError(.typeMismatch, "product_id_array is not an array") }
            var ids: [UInt16] = []
            for item in items { ids.append(try item.uint(as: UInt16.self)) }
            return ids
        }
        guard (1...100).contains(productIDs.count) else { throw .invalidPayload("product_id_array has \(productIDs.count) entries (1…100)") }
        deviceTypeID = try u(3, UInt32.self)
        certificateID = try tlv { () throws(TLVError) in try s.member(.context(4)).string() }
        guard certificateID.utf8.count == 19 else { throw .invalidPayload("certificate_id is not 19 characters") }
        securityLevel = try u(5, UInt8.self)
        securityInformation = try u(6, UInt16.self)
        versionNumber = try u(7, UInt16.self)
        guard let type = CertificationType(rawValue: try u(8, UInt8.self)) else { throw .invalidPayload("unknown certification_type") }
        certificationType = type
        dacOriginVendorID = s[context: 9] == nil ? nil : try u(9, UInt16.self)
        dacOriginProductID = s[context: 10] == nil ? nil : try u(10, UInt16.self)
        guard (dacOriginVendorID == nil) == (dacOriginProductID == nil) else {
            throw .invalidPayload("dac_origin_vendor_id and dac_origin_product_id must come together")
        }
        if let list = s[context: 11] {
            authorizedPAAs = try tlv { () throws(TLVError) in
                guard case .array(let items) = list.value else { throw TLVError(.typeMismatch, "authorized_paa_list is not an array") }
                var skids: [[UInt8]] = []
                for item in items { skids.append(try item.bytes()) }
                return skids
            }
            guard authorizedPAAs!.allSatisfy({ $0.count == 20 }), authorizedPAAs!.count <= 10 else {
                throw .invalidPayload("authorized_paa_list holds at most 10 SKIDs of 20 bytes")
            }
        }
    }

    // MARK: CMS

    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]

    /// Signs the CD: a CMS ContentInfo of SignedData (version 3) with the TLV as id-data
    /// eContent, one SignerInfo identified by the signer's SKID, SHA-256, ecdsa-with-SHA256
    /// over the eContent itself (no signed attributes).
    ///
    /// - Parameter certificate: the CD signing certificate (DER), for its subject key identifier.
    /// - Returns: the CMS DER a device returns in its attestation elements.
    public func signed(with key: P256.Signing.PrivateKey, certificate: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        let signer = try DeviceAttestationCertificate(derEncoded: certificate)
        guard let skid = signer.subjectKeyID else { throw .certificate("the CD signing certificate has no subject key identifier") }
        guard signer.publicKey.rawRepresentation == key.publicKey.rawRepresentation else {
            throw .certificate("the CD signing key does not belong to the certificate")
        }
        let content = try tlvEncoded()
        let signature: [UInt8]
        do { signature = Array(try key.signature(for: content).derRepresentation) } catch {
            throw .crypto("CD signature failed: \(error)")
        }
        return try Self.der { s in
            try s.appendConstructedNode(identifier: .sequence) { s in
                try s.serialize(Self.signedDataOID)
                try s.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { s in
                    try s.appendConstructedNode(identifier: .sequence) { s in
                        try s.serialize(3)
                        try s.appendConstructedNode(identifier: .set) { s in try Self.algorithm(Self.sha256OID, into: &s) }
                        try s.appendConstructedNode(identifier: .sequence) { s in
                            try s.serialize(Self.dataOID)
                            try s.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { s in
                                try s.serialize(ASN1OctetString(contentBytes: content[...]))
                            }
                        }
                        try s.appendConstructedNode(identifier: .set) { s in
                            try s.appendConstructedNode(identifier: .sequence) { s in
                                try s.serialize(3)
                                // SignerIdentifier subjectKeyIdentifier: [0] IMPLICIT OCTET STRING.
                                try ASN1OctetString(contentBytes: skid[...])
                                    .serialize(into: &s, withIdentifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific))
                                try Self.algorithm(Self.sha256OID, into: &s)
                                try Self.algorithm(MatterCertificate.ecdsaWithSHA256, into: &s)
                                try s.serialize(ASN1OctetString(contentBytes: signature[...]))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Reads a signed CD and checks its signature against the CD signing certificates given
    /// (the one whose SKID the SignerInfo names).
    ///
    /// - Returns: the declaration and the SKID of the key that signed it.
    /// - Throws: `MatterSecurityError` when the CMS does not have the profile above, names an
    ///   unknown signer, or its signature does not verify.
    public static func verify(_ cms: [UInt8], signers: [[UInt8]]) throws(MatterSecurityError) -> (CertificationDeclaration, signerKeyID: [UInt8]) {
        let (content, skid, signatureDER) = try parseCMS(cms)
        var signer: DeviceAttestationCertificate?
        for der in signers {
            let candidate = try DeviceAttestationCertificate(derEncoded: der)
            if candidate.subjectKeyID == skid { signer = candidate }
        }
        guard let signer else { throw .verificationFailed("the CD is signed by an unknown key (SKID \(skid.hexString))") }
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureDER),
            signer.publicKey.isValidSignature(signature, for: content)
        else { throw .verificationFailed("the CD signature does not verify") }
        return (try CertificationDeclaration(tlv: content), skid)
    }

    static func parseCMS(_ cms: [UInt8]) throws(MatterSecurityError) -> (content: [UInt8], skid: [UInt8], signature: [UInt8]) {
        do {
            let contentInfo = try children(try DER.parse(cms), .sequence, count: 2)
            guard try ASN1ObjectIdentifier(derEncoded: contentInfo[0]) == signedDataOID else { throw cmsError("not SignedData") }
            let wrapped = try children(contentInfo[1], ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), count: 1)
            let signedData = try children(wrapped[0], .sequence, count: 4)  // no certificates, no CRLs
            guard try Int(derEncoded: signedData[0]) == 3 else { throw cmsError("SignedData version is not 3") }
            let digests = try children(signedData[1], .set, count: 1)
            try expectAlgorithm(digests[0], sha256OID)
            let encapsulated = try children(signedData[2], .sequence, count: 2)
            guard try ASN1ObjectIdentifier(derEncoded: encapsulated[0]) == dataOID else { throw cmsError("eContentType is not id-data") }
            let explicit = try children(encapsulated[1], ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), count: 1)
            let content = Array(try ASN1OctetString(derEncoded: explicit[0]).bytes)
            let signerInfos = try children(signedData[3], .set, count: 1)
            let signerInfo = try children(signerInfos[0], .sequence, count: 5)
            guard try Int(derEncoded: signerInfo[0]) == 3 else { throw cmsError("SignerInfo version is not 3") }
            let skid = Array(try ASN1OctetString(derEncoded: signerInfo[1], withIdentifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)).bytes)
            try expectAlgorithm(signerInfo[2], sha256OID)
            try expectAlgorithm(signerInfo[3], MatterCertificate.ecdsaWithSHA256)
            let signature = Array(try ASN1OctetString(derEncoded: signerInfo[4]).bytes)
            return (content, skid, signature)
        } catch let error as MatterSecurityError {
            throw error
        } catch {
            throw .invalidPayload("the CD's CMS does not parse: \(error)")
        }
    }

    private static func cmsError(_ what: String) -> MatterSecurityError { .invalidPayload("the CD's CMS: \(what)") }

    private static func children(_ node: ASN1Node, _ identifier: ASN1Identifier, count: Int) throws -> [ASN1Node] {
        guard node.identifier == identifier, case .constructed(let nodes) = node.content else {
            throw cmsError("expected \(identifier), found \(node.identifier)")
        }
        let list = Array(nodes)
        guard list.count == count else { throw cmsError("\(identifier) has \(list.count) elements; \(count) expected") }
        return list
    }

    private static func expectAlgorithm(_ node: ASN1Node, _ oid: ASN1ObjectIdentifier) throws {
        guard node.identifier == .sequence, case .constructed(let nodes) = node.content else { throw cmsError("bad AlgorithmIdentifier") }
        let list = Array(nodes)
        guard (1...2).contains(list.count), try ASN1ObjectIdentifier(derEncoded: list[0]) == oid else {
            throw cmsError("algorithm is not \(oid)")
        }
        if list.count == 2, list[1].identifier != .null { throw cmsError("algorithm \(oid) has parameters") }
    }

    private static func algorithm(_ oid: ASN1ObjectIdentifier, into s: inout DER.Serializer) throws {
        try s.appendConstructedNode(identifier: .sequence) { s in try s.serialize(oid) }
    }

    private static func der(_ body: (inout DER.Serializer) throws -> Void) throws(MatterSecurityError) -> [UInt8] {
        var s = DER.Serializer()
        do { try body(&s) } catch { throw .crypto("DER encoding failed: \(error)") }
        return s.serializedBytes
    }
}

extension [UInt8] {
    var hexString: String { map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
}
