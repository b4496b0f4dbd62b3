import Crypto
import Foundation
import SwiftASN1
import X509

// The X.509 DER form of a Matter certificate (Core Specification 6.5, "X.509 encoding"): the
// TBS bytes are rebuilt field by field in the canonical order the TLV form implies, because the
// signature covers them.
extension MatterCertificate {
    static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]
    static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10045, 2, 1]
    static let prime256v1: ASN1ObjectIdentifier = [1, 2, 840, 10045, 3, 1, 7]
    static let basicConstraintsOID: ASN1ObjectIdentifier = [2, 5, 29, 19]
    static let keyUsageOID: ASN1ObjectIdentifier = [2, 5, 29, 15]
    static let extendedKeyUsageOID: ASN1ObjectIdentifier = [2, 5, 29, 37]
    static let subjectKeyIdentifierOID: ASN1ObjectIdentifier = [2, 5, 29, 14]
    static let authorityKeyIdentifierOID: ASN1ObjectIdentifier = [2, 5, 29, 35]
    static func ekuOID(_ purpose: ExtendedKeyUsage) -> ASN1ObjectIdentifier { [1, 3, 6, 1, 5, 5, 7, 3, UInt(purpose.rawValue)] }
    /// Seconds from 1970-01-01 to 2000-01-01, the Matter epoch.
    static let matterEpochOffset: Int64 = 946_684_800

    /// The DER TBSCertificate the signature covers.
    public func tbsDER() throws(MatterSecurityError) -> [UInt8] {
        try der { s in try serializeTBS(into: &s) }
    }

    /// The whole certificate as X.509 DER.
    public func derEncoded() throws(MatterSecurityError) -> [UInt8] {
        let tbs = try tbsDER()
        let sigDER = try ecdsaDER()
        return try der { s in
            try s.appendConstructedNode(identifier: .sequence) { s in
                s.serializeRawBytes(tbs)
                try s.appendConstructedNode(identifier: .sequence) { s in try s.serialize(Self.ecdsaWithSHA256) }
                try s.serialize(ASN1BitString(bytes: sigDER[...]))
            }
        }
    }

    func ecdsaDER() throws(MatterSecurityError) -> [UInt8] {
        do {
            return Array(try P256.Signing.ECDSASignature(rawRepresentation: signature).derRepresentation)
        } catch {
            throw .certificate("certificate signature is not a P-256 ECDSA signature")
        }
    }

    private func serializeTBS(into s: inout DER.Serializer) throws {
        try s.appendConstructedNode(identifier: .sequence) { s in
            try s.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { s in
                try s.serialize(2)
            }
            s.appendPrimitiveNode(identifier: .integer) { $0.append(contentsOf: serialNumber) }
            try s.appendConstructedNode(identifier: .sequence) { s in try s.serialize(Self.ecdsaWithSHA256) }
            try Self.serialize(issuer, into: &s)
            try s.appendConstructedNode(identifier: .sequence) { s in
                try Self.serializeTime(notBefore, into: &s)
                try Self.serializeTime(notAfter, into: &s)
            }
            try Self.serialize(subject, into: &s)
            try s.appendConstructedNode(identifier: .sequence) { s in
                try s.appendConstructedNode(identifier: .sequence) { s in
                    try s.serialize(Self.ecPublicKey)
                    try s.serialize(Self.prime256v1)
                }
                try s.serialize(ASN1BitString(bytes: publicKey[...]))
            }
            try s.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific)) { s in
                try s.appendConstructedNode(identifier: .sequence) { s in
                    for e in extensions { try Self.serialize(e, into: &s) }
                }
            }
        }
    }

    private static func serialize(_ name: MatterDistinguishedName, into s: inout DER.Serializer) throws {
        try s.appendConstructedNode(identifier: .sequence) { s in
            for attribute in name.attributes {
                let (oid, value) = try attribute.x509()
                try s.appendConstructedNode(identifier: .set) { s in
                    try s.appendConstructedNode(identifier: .sequence) { s in
                        try s.serialize(oid)
                        try s.serialize(value)
                    }
                }
            }
        }
    }

    private static func serializeTime(_ matterSeconds: UInt32, into s: inout DER.Serializer) throws {
        if matterSeconds == 0 {
            try s.serialize(try GeneralizedTime(year: 9999, month: 12, day: 31, hours: 23, minutes: 59, seconds: 59, fractionalSeconds: 0))
            return
        }
        let c = CivilTime(unixSeconds: Int64(matterSeconds) + matterEpochOffset)
        if c.year >= 1950 && c.year < 2050 {
            try s.serialize(try UTCTime(year: c.year, month: c.month, day: c.day, hours: c.hour, minutes: c.minute, seconds: c.second))
        } else {
            try s.serialize(try GeneralizedTime(
                year: c.year, month: c.month, day: c.day, hours: c.hour, minutes: c.minute, seconds: c.second, fractionalSeconds: 0))
        }
    }

    private static func serialize(_ e: Extension, into s: inout DER.Serializer) throws {
        func ext(_ oid: ASN1ObjectIdentifier, critical: Bool, _ body: (inout DER.Serializer) throws -> Void) throws {
            var inner = DER.Serializer()
            try body(&inner)
            try s.appendConstructedNode(identifier: .sequence) { s in
                try s.serialize(oid)
                if critical { try s.serialize(true) }
                try s.serialize(ASN1OctetString(contentBytes: inner.serializedBytes[...]))
            }
        }
        switch e {
        case .basicConstraints(let ca, let pathLength):
            try ext(basicConstraintsOID, critical: true) { s in
                try s.appendConstructedNode(identifier: .sequence) { s in
                    if ca { try s.serialize(true) }
                    if let pathLength { try s.serialize(Int(pathLength)) }
                }
            }
        case .keyUsage(let usage):
            try ext(keyUsageOID, critical: true) { s in
                // Bit i of the TLV mask is named bit i of the BIT STRING (bit 0 = MSB of byte 0);
                // DER drops trailing zero bits.
                var bits = usage.rawValue
                var bytes: [UInt8] = []
                var highest = -1
                for i in 0..<9 where bits & (1 << i) != 0 { highest = i }
                let count = highest < 0 ? 0 : highest / 8 + 1
                bytes = [UInt8](repeating: 0, count: count)
                for i in 0..<9 where bits & (1 << i) != 0 { bytes[i / 8] |= 0x80 >> UInt8(i % 8) }
                bits = 0
                let padding = highest < 0 ? 0 : 7 - highest % 8
                try s.serialize(ASN1BitString(bytes: bytes[...], paddingBits: padding))
            }
        case .extendedKeyUsage(let purposes):
            try ext(extendedKeyUsageOID, critical: true) { s in
                try s.appendConstructedNode(identifier: .sequence) { s in
                    for p in purposes { try s.serialize(ekuOID(p)) }
                }
            }
        case .subjectKeyIdentifier(let id):
            try ext(subjectKeyIdentifierOID, critical: false) { s in try s.serialize(ASN1OctetString(contentBytes: id[...])) }
        case .authorityKeyIdentifier(let id):
            try ext(authorityKeyIdentifierOID, critical: false) { s in
                s.appendConstructedNode(identifier: .sequence) { s in
                    s.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) {
                        $0.append(contentsOf: id)
                    }
                }
            }
        case .future(let der):
            s.serializeRawBytes(der)
        }
    }

    private func der(_ body: (inout DER.Serializer) throws -> Void) throws(MatterSecurityError) -> [UInt8] {
        do {
            var s = DER.Serializer()
            try body(&s)
            return s.serializedBytes
        } catch let error as MatterSecurityError {
            throw error
        } catch {
            throw .certificate("certificate cannot be DER-encoded: \(error)")
        }
    }
}

// MARK: - From X.509

extension MatterCertificate {
    /// Reads an X.509 DER certificate that fits Matter's profile into the TLV model.
    /// - Throws: `MatterSecurityError` when it does not parse, uses another algorithm, or has a
    ///   DN attribute Matter cannot carry. Extensions Matter has no tag for become `.future`.
    public init(derEncoded bytes: [UInt8]) throws(MatterSecurityError) {
        do {
            try self.init(throwingDER: bytes)
        } catch let error as MatterSecurityError {
            throw error
        } catch {
            throw .certificate("X.509 certificate does not parse: \(error)")
        }
    }

    private init(throwingDER bytes: [UInt8]) throws {
        let certificate = try Certificate(derEncoded: bytes)
        let root = try DER.parse(bytes)
        guard case .constructed(let top) = root.content else { throw MatterSecurityError.certificate("certificate is not a SEQUENCE") }
        var topNodes = top.makeIterator()
        guard let tbsNode = topNodes.next(), case .constructed(let tbsChildren) = tbsNode.content else {
            throw MatterSecurityError.certificate("TBSCertificate is not a SEQUENCE")
        }
        _ = topNodes.next()
        guard let sigNode = topNodes.next() else { throw MatterSecurityError.certificate("certificate has no signature") }
        let sigBits = try ASN1BitString(derEncoded: sigNode)
        let signature = try P256.Signing.ECDSASignature(derRepresentation: Array(sigBits.bytes))
        guard certificate.signatureAlgorithm == .ecdsaWithSHA256 else {
            throw MatterSecurityError.certificate("certificate is not signed with ecdsa-with-SHA256")
        }
        var tbsIterator = tbsChildren.makeIterator()
        _ = tbsIterator.next()  // version
        guard let serialNode = tbsIterator.next(), case .primitive(let serialBytes) = serialNode.content else {
            throw MatterSecurityError.certificate("certificate serial number is missing")
        }
        guard let key = P256.Signing.PublicKey(certificate.publicKey) else {
            throw MatterSecurityError.certificate("certificate key is not a P-256 key")
        }
        var extensions: [Extension] = []
        for e in certificate.extensions {
            switch e.oid {
            case Self.basicConstraintsOID:
                switch try BasicConstraints(e) {
                case .isCertificateAuthority(let path): extensions.append(.basicConstraints(isCA: true, pathLength: path.map { UInt8($0) }))
                case .notCertificateAuthority: extensions.append(.basicConstraints(isCA: false, pathLength: nil))
                }
            case Self.keyUsageOID:
                let ku = try X509.KeyUsage(e)
                var usage = KeyUsage()
                if ku.digitalSignature { usage.insert(.digitalSignature) }
                if ku.nonRepudiation { usage.insert(.nonRepudiation) }
                if ku.keyEncipherment { usage.insert(.keyEncipherment) }
                if ku.dataEncipherment { usage.insert(.dataEncipherment) }
                if ku.keyAgreement { usage.insert(.keyAgreement) }
                if ku.keyCertSign { usage.insert(.keyCertSign) }
                if ku.cRLSign { usage.insert(.crlSign) }
                if ku.encipherOnly { usage.insert(.encipherOnly) }
                if ku.decipherOnly { usage.insert(.decipherOnly) }
                extensions.append(.keyUsage(usage))
            case Self.extendedKeyUsageOID:
                var purposes: [ExtendedKeyUsage] = []
                for usage in try X509.ExtendedKeyUsage(e) {
                    guard let p = (1...6).lazy.compactMap({ ExtendedKeyUsage(rawValue: UInt8($0)) })
                        .first(where: { X509.ExtendedKeyUsage.Usage(oid: Self.ekuOID($0)) == usage })
                    else { throw MatterSecurityError.certificate("extended key usage \(usage) has no Matter number") }
                    purposes.append(p)
                }
                extensions.append(.extendedKeyUsage(purposes))
            case Self.subjectKeyIdentifierOID:
                extensions.append(.subjectKeyIdentifier(Array(try SubjectKeyIdentifier(e).keyIdentifier)))
            case Self.authorityKeyIdentifierOID:
                guard let id = try AuthorityKeyIdentifier(e).keyIdentifier else {
                    throw MatterSecurityError.certificate("authority key identifier has no key identifier")
                }
                extensions.append(.authorityKeyIdentifier(Array(id)))
            default:
                var s = DER.Serializer()
                try s.serialize(e)
                extensions.append(.future(s.serializedBytes))
            }
        }
        self.init(
            serialNumber: Array(serialBytes), issuer: try Self.matterName(certificate.issuer),
            notBefore: try Self.matterTime(certificate.notValidBefore), notAfter: try Self.matterTime(certificate.notValidAfter),
            subject: try Self.matterName(certificate.subject), publicKey: Array(key.x963Representation),
            extensions: extensions, signature: Array(signature.rawRepresentation))
    }

    private static func matterTime(_ date: Date) throws -> UInt32 {
        let unix = Int64(date.timeIntervalSince1970.rounded(.down))
        if unix == 253_402_300_799 { return 0 }  // 9999-12-31T23:59:59Z
        let t = unix - matterEpochOffset
        guard t > 0, t <= Int64(UInt32.max) else { throw MatterSecurityError.certificate("certificate time is outside Matter's range") }
        return UInt32(t)
    }

    private static func matterName(_ name: DistinguishedName) throws -> MatterDistinguishedName {
        var attributes: [MatterDistinguishedName.Attribute] = []
        for rdn in name {
            for attribute in rdn {
                var s = DER.Serializer()
                try s.serialize(ASN1Any(attribute.value))
                let node = try DER.parse(s.serializedBytes)
                guard case .primitive(let content) = node.content else { throw MatterSecurityError.certificate("DN value is constructed") }
                let text = String(decoding: content, as: UTF8.self)
                if let tag = MatterDistinguishedName.stringOIDs.first(where: { $0.value == attribute.type })?.key {
                    attributes.append(.string(tag: tag, value: text, printable: node.identifier == .printableString))
                    continue
                }
                guard let tag = (17...22).first(where: { MatterDistinguishedName.matterOID(UInt8($0)) == attribute.type }),
                    let number = UInt64(text, radix: 16)
                else { throw MatterSecurityError.certificate("DN attribute \(attribute.type) cannot be carried by a Matter certificate") }
                attributes.append(try .init(tlvTag: UInt8(tag), unsigned: number, string: nil))
            }
        }
        return MatterDistinguishedName(attributes)
    }
}

/// UTC calendar fields of a Unix time (proleptic Gregorian).
struct CivilTime {
    let year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int

    init(unixSeconds: Int64) {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secs = Int(unixSeconds - days * 86_400)
        hour = secs / 3600
        minute = secs % 3600 / 60
        second = secs % 60
        // Howard Hinnant's days-from-civil inverse.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = Int(doy - (153 * mp + 2) / 5 + 1)
        month = Int(mp < 10 ? mp + 3 : mp - 9)
        year = Int(yoe + era * 400) + (month <= 2 ? 1 : 0)
    }
}
