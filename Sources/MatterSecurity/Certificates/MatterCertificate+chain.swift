public import Crypto

extension MatterCertificate {
    /// Signs a new certificate (the issuer side of a fabric: an RCAC signs itself, then ICACs
    /// and NOCs). Extensions are written in the order given.
    public static func issue(
        serialNumber: [UInt8], issuer: MatterDistinguishedName, subject: MatterDistinguishedName, subjectKey: P256.Signing.PublicKey,
        notBefore: UInt32, notAfter: UInt32, extensions: [Extension], issuerKey: P256.Signing.PrivateKey
    ) throws(MatterSecurityError) -> MatterCertificate {
        var certificate = MatterCertificate(
            serialNumber: serialNumber, issuer: issuer, notBefore: notBefore, notAfter: notAfter, subject: subject,
            publicKey: Array(subjectKey.x963Representation), extensions: extensions, signature: [UInt8](repeating: 0, count: 64))
        let tbs = try certificate.tbsDER()
        do {
            certificate.signature = Array(try issuerKey.signature(for: tbs).rawRepresentation)
        } catch {
            throw .crypto("signing failed: \(error)")
        }
        return certificate
    }

    /// The key identifier Matter uses: the SHA-1 of the public key point (RFC 5280 method 1).
    public static func keyIdentifier(_ publicKey: [UInt8]) -> [UInt8] {
        Array(Insecure.SHA1.hash(data: publicKey))
    }

    /// Whether `issuerKey` signed this certificate.
    public func isSigned(by issuerKey: [UInt8]) -> Bool {
        guard let key = try? P256.Signing.PublicKey(x963Representation: issuerKey),
            let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            let tbs = try? tbsDER()
        else { return false }
        return key.isValidSignature(sig, for: tbs)
    }

    /// Whether `time` (Matter epoch seconds) is within the validity period.
    public func isValid(at time: UInt32) -> Bool {
        time >= notBefore && (notAfter == 0 || time <= notAfter)
    }
}

/// An operational certificate chain as CASE carries it: NOC, optional ICAC, trusted RCAC
/// (Core Specification 6.3 and 6.5.x: "Operational certificate chain validation").
public struct OperationalChain: Sendable, Hashable {
    public let noc: MatterCertificate
    public let icac: MatterCertificate?

    public init(noc: MatterCertificate, icac: MatterCertificate?) {
        self.noc = noc
        self.icac = icac
    }

    /// What a valid chain says about the peer.
    public struct Identity: Sendable, Hashable {
        public let nodeID: UInt64
        public let fabricID: UInt64
        public let caseAuthenticatedTags: [UInt32]
        /// The NOC's public key (65 bytes).
        public let publicKey: [UInt8]
    }

    /// Operational node IDs (2.5.5.1): 0x0000_0000_0000_0001 … 0xFFFF_FFEF_FFFF_FFFF.
    public static let operationalNodeIDs: ClosedRange<UInt64> = 1...0xFFFF_FFEF_FFFF_FFFF

    /// Validates NOC → (ICAC →) RCAC: signatures, issuer/subject and key identifiers, CA flags,
    /// key usages, the node ID range, consistent fabric IDs and, when `time` is given, validity.
    /// - Throws: `MatterSecurityError` (certificate) naming the first rule broken.
    public func validate(root: MatterCertificate, at time: UInt32? = nil) throws(MatterSecurityError) -> Identity {
        func check(_ ok: Bool, _ message: @autoclosure () -> String) throws(MatterSecurityError) {
            if !ok { throw .certificate(message()) }
        }
        try check(root.isCA, "the root certificate is not a CA")
        try check(root.subject == root.issuer, "the root certificate is not self-issued")
        try check(root.isSigned(by: root.publicKey), "the root certificate's self-signature is invalid")
        try check(root.subject.rcacID != nil, "the root certificate has no RCAC ID")
        try check(root.keyUsage?.contains(.keyCertSign) == true, "the root certificate may not sign certificates")
        var parent = root
        var chain: [MatterCertificate] = [root]
        if let icac {
            try check(icac.isCA, "the ICAC is not a CA")
            try check(icac.subject.icacID != nil, "the ICAC has no ICAC ID")
            try check(icac.keyUsage?.contains(.keyCertSign) == true, "the ICAC may not sign certificates")
            try check(icac.issuer == root.subject, "the ICAC's issuer is not the root")
            try check(icac.authorityKeyIdentifier == root.subjectKeyIdentifier, "the ICAC's authority key ID is not the root's")
            try check(icac.isSigned(by: root.publicKey), "the ICAC's signature is invalid")
            parent = icac
            chain.append(icac)
        }
        try check(!noc.isCA, "the NOC is a CA")
        try check(noc.keyUsage?.contains(.digitalSignature) == true, "the NOC may not sign")
        let eku = noc.extendedKeyUsage ?? []
        try check(eku.contains(.clientAuth) && eku.contains(.serverAuth), "the NOC lacks client and server authentication")
        try check(noc.issuer == parent.subject, "the NOC's issuer is not its parent")
        try check(noc.authorityKeyIdentifier == parent.subjectKeyIdentifier, "the NOC's authority key ID is not its parent's")
        try check(noc.isSigned(by: parent.publicKey), "the NOC's signature is invalid")
        chain.append(noc)
        guard let nodeID = noc.subject.nodeID, Self.operationalNodeIDs.contains(nodeID) else {
            throw .certificate("the NOC has no operational node ID")
        }
        guard let fabricID = noc.subject.fabricID, fabricID != 0 else { throw .certificate("the NOC has no fabric ID") }
        for c in chain.dropLast() {
            if let f = c.subject.fabricID { try check(f == fabricID, "the chain's fabric IDs disagree") }
        }
        if let time {
            for c in chain { try check(c.isValid(at: time), "a certificate in the chain is not valid at \(time)") }
        }
        return Identity(nodeID: nodeID, fabricID: fabricID, caseAuthenticatedTags: noc.subject.caseAuthenticatedTags, publicKey: noc.publicKey)
    }
}
