import MatterTLV

/// A Matter operational (or attestation) certificate in its compact TLV form (Core
/// Specification 6.5): the same content as an X.509 v3 certificate with an ECDSA P-256 key and
/// an ecdsa-with-SHA256 signature, which is computed over the X.509 DER form.
public struct MatterCertificate: Hashable, Sendable {
    public var serialNumber: [UInt8]
    public var issuer: MatterDistinguishedName
    /// Seconds since 2000-01-01T00:00:00Z.
    public var notBefore: UInt32
    /// Seconds since 2000-01-01T00:00:00Z; 0 means no well-defined expiry (99991231235959Z).
    public var notAfter: UInt32
    public var subject: MatterDistinguishedName
    /// 65-byte uncompressed P-256 point.
    public var publicKey: [UInt8]
    public var extensions: [Extension]
    /// 64 bytes: r ‖ s.
    public var signature: [UInt8]

    /// A certificate extension (6.5.11).
    public enum Extension: Hashable, Sendable {
        case basicConstraints(isCA: Bool, pathLength: UInt8?)
        case keyUsage(KeyUsage)
        case extendedKeyUsage([ExtendedKeyUsage])
        case subjectKeyIdentifier([UInt8])
        case authorityKeyIdentifier([UInt8])
        /// Any other extension, as its whole DER `Extension` encoding.
        case future([UInt8])
    }

    /// Key usage bits as the TLV form numbers them.
    public struct KeyUsage: OptionSet, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let digitalSignature = KeyUsage(rawValue: 0x0001)
        public static let nonRepudiation = KeyUsage(rawValue: 0x0002)
        public static let keyEncipherment = KeyUsage(rawValue: 0x0004)
        public static let dataEncipherment = KeyUsage(rawValue: 0x0008)
        public static let keyAgreement = KeyUsage(rawValue: 0x0010)
        public static let keyCertSign = KeyUsage(rawValue: 0x0020)
        public static let crlSign = KeyUsage(rawValue: 0x0040)
        public static let encipherOnly = KeyUsage(rawValue: 0x0080)
        public static let decipherOnly = KeyUsage(rawValue: 0x0100)
    }

    /// Extended key usage purposes as the TLV form numbers them.
    public enum ExtendedKeyUsage: UInt8, Hashable, Sendable {
        case serverAuth = 1, clientAuth = 2, codeSigning = 3, emailProtection = 4, timeStamping = 5, ocspSigning = 6
    }

    public init(
        serialNumber: [UInt8], issuer: MatterDistinguishedName, notBefore: UInt32, notAfter: UInt32,
        subject: MatterDistinguishedName, publicKey: [UInt8], extensions: [Extension], signature: [UInt8]
    ) {
        self.serialNumber = serialNumber
        self.issuer = issuer
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.subject = subject
        self.publicKey = publicKey
        self.extensions = extensions
        self.signature = signature
    }

    public var isCA: Bool {
        for case .basicConstraints(let ca, _) in extensions { return ca }
        return false
    }
    public var subjectKeyIdentifier: [UInt8]? {
        for case .subjectKeyIdentifier(let v) in extensions { return v }
        return nil
    }
    public var authorityKeyIdentifier: [UInt8]? {
        for case .authorityKeyIdentifier(let v) in extensions { return v }
        return nil
    }
    public var keyUsage: KeyUsage? {
        for case .keyUsage(let v) in extensions { return v }
        return nil
    }
    public var extendedKeyUsage: [ExtendedKeyUsage]? {
        for case .extendedKeyUsage(let v) in extensions { return v }
        return nil
    }
}

// MARK: - TLV

extension MatterCertificate {
    /// The TLV encoding (an anonymous structure, tags 1…11).
    public func tlvEncoded() throws(MatterSecurityError) -> [UInt8] {
        try tlv { () throws(TLVError) in try tlvElement(.anonymous).encoded() }
    }

    func tlvElement(_ tag: TLVTag) -> TLVElement {
        func dn(_ n: UInt8, _ name: MatterDistinguishedName) -> TLVElement {
            .list(.context(n), name.attributes.map { a in
                switch a {
                case .string(_, let value, _): TLVElement(.context(a.tlvTag), .utf8(value))
                case .matterCASEAuthenticatedTag(let v): TLVElement(.context(a.tlvTag), .unsigned(UInt64(v)))
                case .matterNodeID(let v), .matterFirmwareSigningID(let v), .matterICACID(let v), .matterRCACID(let v),
                    .matterFabricID(let v):
                    TLVElement(.context(a.tlvTag), .unsigned(v))
                }
            })
        }
        let ext: [TLVElement] = extensions.map { e in
            switch e {
            case .basicConstraints(let ca, let pathLength):
                var members = [TLVElement(.context(1), .bool(ca))]
                if let pathLength { members.append(.init(.context(2), .unsigned(UInt64(pathLength)))) }
                return .structure(.context(1), members)
            case .keyUsage(let usage): return TLVElement(.context(2), .unsigned(UInt64(usage.rawValue)))
            case .extendedKeyUsage(let purposes):
                return .array(.context(3), purposes.map { TLVElement(.anonymous, .unsigned(UInt64($0.rawValue))) })
            case .subjectKeyIdentifier(let id): return TLVElement(.context(4), .bytes(id))
            case .authorityKeyIdentifier(let id): return TLVElement(.context(5), .bytes(id))
            case .future(let der): return TLVElement(.context(6), .bytes(der))
            }
        }
        return .structure(tag, [
            .init(.context(1), .bytes(serialNumber)),
            .init(.context(2), .unsigned(1)),  // ecdsa-with-SHA256
            dn(3, issuer),
            .init(.context(4), .unsigned(UInt64(notBefore))),
            .init(.context(5), .unsigned(UInt64(notAfter))),
            dn(6, subject),
            .init(.context(7), .unsigned(1)),  // id-ecPublicKey
            .init(.context(8), .unsigned(1)),  // prime256v1
            .init(.context(9), .bytes(publicKey)),
            .list(.context(10), ext),
            .init(.context(11), .bytes(signature)),
        ])
    }

    /// Reads the TLV form.
    /// - Throws: `MatterSecurityError` for malformed TLV, an algorithm other than ECDSA P-256 /
    ///   SHA-256, or an unknown DN attribute or extension.
    public init(tlv bytes: [UInt8]) throws(MatterSecurityError) {
        let element = try TLVElement.decodeStructure(bytes, "Matter certificate")
        try self.init(element: element)
    }

    init(element s: TLVElement) throws(MatterSecurityError) {
        func dn(_ n: UInt8) throws(MatterSecurityError) -> MatterDistinguishedName {
            guard let list = s[context: n], case .list(let members) = list.value else {
                throw .certificate("certificate field \(n) is not a DN list")
            }
            var attributes: [MatterDistinguishedName.Attribute] = []
            for m in members {
                guard case .context(let tag) = m.tag else { throw .certificate("DN attribute without a context tag") }
                var unsigned: UInt64?, string: String?
                switch m.value {
                case .unsigned(let v): unsigned = v
                case .utf8(let v): string = v
                default: break
                }
                attributes.append(try .init(tlvTag: tag, unsigned: unsigned, string: string))
            }
            return MatterDistinguishedName(attributes)
        }
        serialNumber = try s.octets(1)
        guard serialNumber.count <= 20 else { throw .certificate("certificate serial number is longer than 20 bytes") }
        let (sigAlgo, pkAlgo, curve, nb, na) = try tlv { () throws(TLVError) in
            (try s.member(.context(2)).uint(), try s.member(.context(7)).uint(), try s.member(.context(8)).uint(),
             try s.member(.context(4)).uint(as: UInt32.self), try s.member(.context(5)).uint(as: UInt32.self))
        }
        guard sigAlgo == 1, pkAlgo == 1, curve == 1 else {
            throw .certificate("certificate algorithms \(sigAlgo)/\(pkAlgo)/\(curve) are not ECDSA-SHA256 on P-256")
        }
        issuer = try dn(3)
        notBefore = nb
        notAfter = na
        subject = try dn(6)
        publicKey = try s.octets(9, length: 65)
        signature = try s.octets(11, length: 64)
        guard let extList = s[context: 10], case .list(let extMembers) = extList.value else {
            throw .certificate("certificate extensions are not a list")
        }
        var extensions: [Extension] = []
        for e in extMembers {
            guard case .context(let tag) = e.tag else { throw .certificate("certificate extension without a context tag") }
            switch tag {
            case 1:
                let (ca, path) = try tlv { () throws(TLVError) in
                    (try e.member(.context(1)).bool(), try e[context: 2]?.uint(as: UInt8.self))
                }
                extensions.append(.basicConstraints(isCA: ca, pathLength: path))
            case 2:
                extensions.append(.keyUsage(KeyUsage(rawValue: try tlv { () throws(TLVError) in try e.uint(as: UInt16.self) })))
            case 3:
                guard case .array(let items) = e.value else { throw .certificate("extended key usage is not an array") }
                var purposes: [ExtendedKeyUsage] = []
                for item in items {
                    let raw = try tlv { () throws(TLVError) in try item.uint(as: UInt8.self) }
                    guard let purpose = ExtendedKeyUsage(rawValue: raw) else { throw .certificate("extended key usage \(raw) is unknown") }
                    purposes.append(purpose)
                }
                extensions.append(.extendedKeyUsage(purposes))
            case 4: extensions.append(.subjectKeyIdentifier(try tlv { () throws(TLVError) in try e.bytes() }))
            case 5: extensions.append(.authorityKeyIdentifier(try tlv { () throws(TLVError) in try e.bytes() }))
            case 6: extensions.append(.future(try tlv { () throws(TLVError) in try e.bytes() }))
            default: throw .certificate("certificate extension tag \(tag) is unknown")
            }
        }
        self.extensions = extensions
    }
}
