import Crypto
import MatterSecurity
import MatterTLV

/// NodeOperationalCertStatusEnum (Core Specification 11.18.4.1).
public enum NodeOperationalCertStatus: UInt8, Hashable, Sendable {
    case ok = 0
    case invalidPublicKey = 1
    case invalidNodeOpID = 2
    case invalidNOC = 3
    case missingCsr = 4
    case tableFull = 5
    case invalidAdminSubject = 6
    case fabricConflict = 9
    case labelConflict = 10
    case invalidFabricIndex = 11
}

/// NOCResponse (11.18.6.10), the answer to AddNOC, UpdateNOC, UpdateFabricLabel and RemoveFabric.
public struct NOCResponse: Hashable, Sendable {
    public var statusCode: NodeOperationalCertStatus
    public var fabricIndex: FabricIndex?
    public var debugText: String

    public init(_ statusCode: NodeOperationalCertStatus, fabricIndex: FabricIndex? = nil, _ debugText: String = "") {
        self.statusCode = statusCode
        self.fabricIndex = fabricIndex
        self.debugText = debugText
    }
}

/// CertificateChainTypeEnum (11.18.4.4).
public enum CertificateChainType: UInt8, Sendable {
    case dac = 1
    case pai = 2
}

extension CommissioningState {
    /// The 32-byte nonces of AttestationRequest and CSRRequest.
    static let nonceLength = 32
    /// The IPK epoch key length (AddNOC's IPKValue).
    static let ipkLength = 16
    /// Label (11.18.4.5): at most 32 bytes.
    static let maximumLabelLength = 32

    // MARK: - Attestation (11.18.6.1–4)

    /// CertificateChainRequest: the DAC or the PAI, X.509 DER.
    public func certificateChain(_ type: UInt8) throws(CommissioningError) -> [UInt8] {
        switch CertificateChainType(rawValue: type) {
        case .dac: return attestation.dacCertificate
        case .pai: return attestation.paiCertificate
        case nil: throw CommissioningError(.invalidCommand, "unknown certificate type \(type)")
        }
    }

    /// AttestationRequest: the attestation elements (CD, the nonce, a timestamp) and the DAC
    /// key's signature over elements ‖ the session's attestation challenge.
    public func attestationResponse(nonce: [UInt8], session: SessionInfo, timestamp: UInt32 = 0)
        throws(CommissioningError) -> (elements: [UInt8], signature: [UInt8])
    {
        guard nonce.count == Self.nonceLength else { throw CommissioningError(.invalidCommand, "the attestation nonce must be 32 bytes") }
        do {
            return try attestation.attest(nonce: nonce, attestationChallenge: session.attestationChallenge, timestamp: timestamp)
        } catch {
            throw CommissioningError(.failure, "attestation failed: \(error)")
        }
    }

    // MARK: - CSRRequest (11.18.6.5)

    /// CSRRequest: a fresh operational key (replacing any earlier pending one), its PKCS#10
    /// CSR in NOCSR elements with the nonce, signed like attestation elements.
    public mutating func csrResponse(nonce: [UInt8], isForUpdateNOC: Bool = false, session: SessionInfo)
        throws(CommissioningError) -> (elements: [UInt8], signature: [UInt8])
    {
        guard failSafe != nil else { throw .failsafeRequired("CSRRequest") }
        guard nonce.count == Self.nonceLength else { throw CommissioningError(.invalidCommand, "the CSR nonce must be 32 bytes") }
        if isForUpdateNOC && session.authMode != .case { throw CommissioningError(.invalidCommand, "a CSR for UpdateNOC needs CASE") }
        guard failSafe?.nocInvoked == false else { throw CommissioningError(.constraintError, "AddNOC or UpdateNOC already ran under this fail-safe") }
        let key = P256.Signing.PrivateKey()
        do {
            let csr = try Fabric.certificateSigningRequest(for: key)
            let elements = try TLVElement.structure([TLVElement(.context(1), .bytes(csr)), TLVElement(.context(2), .bytes(nonce))]).encoded()
            let signature = try AttestationElements.sign(elements, attestationChallenge: session.attestationChallenge, with: attestation.dacKey)
            failSafe?.pendingOperationalKey = Array(key.rawRepresentation)
            failSafe?.pendingKeyIsForUpdate = isForUpdateNOC
            return (elements, signature)
        } catch {
            throw CommissioningError(.failure, "the CSR could not be made: \(error)")
        }
    }

    // MARK: - AddTrustedRootCertificate (11.18.6.13)

    /// AddTrustedRootCertificate: keeps the RCAC under the fail-safe until AddNOC uses it.
    /// INVALID_COMMAND unless it is a self-signed Matter root; CONSTRAINT_ERROR when a root or
    /// a NOC was already added under this fail-safe.
    public mutating func addTrustedRootCertificate(_ certificate: [UInt8]) throws(CommissioningError) {
        guard let failSafe else { throw .failsafeRequired("AddTrustedRootCertificate") }
        guard failSafe.addedRootCertificate == nil, !failSafe.nocInvoked else {
            throw CommissioningError(.constraintError, "a trusted root was already added under this fail-safe")
        }
        do {
            try Self.checkRoot(try MatterCertificate(tlv: certificate))
        } catch {
            throw CommissioningError(.invalidCommand, "not a valid root certificate: \(error)")
        }
        self.failSafe?.addedRootCertificate = certificate
    }

    static func checkRoot(_ root: MatterCertificate) throws(MatterSecurityError) {
        guard root.isCA, root.subject == root.issuer, root.subject.rcacID != nil, root.keyUsage?.contains(.keyCertSign) == true,
            root.isSigned(by: root.publicKey)
        else { throw MatterSecurityError.verificationFailed }
    }

    // MARK: - AddNOC / UpdateNOC (11.18.6.8–9)

    /// AddNOC: validates NOC (→ ICAC) → the root added under this fail-safe, checks the NOC
    /// certifies the key of the last CSRRequest, adds the fabric (IPK into group key set 0) and
    /// an Administer ACL entry for `caseAdminSubject`. Everything stays under the fail-safe
    /// until CommissioningComplete.
    public mutating func addNOC(
        noc: [UInt8], icac: [UInt8]?, ipk: [UInt8], caseAdminSubject: UInt64, adminVendorID: UInt16, session: SessionInfo
    ) throws(CommissioningError) -> NOCResponse {
        guard let failSafe else { throw .failsafeRequired("AddNOC") }
        guard !failSafe.nocInvoked else { throw CommissioningError(.constraintError, "AddNOC or UpdateNOC already ran under this fail-safe") }
        guard ipk.count == Self.ipkLength else { throw CommissioningError(.constraintError, "the IPK must be 16 bytes") }
        guard let root = failSafe.addedRootCertificate else { return NOCResponse(.invalidNOC, "no trusted root was added first") }
        guard let key = failSafe.pendingOperationalKey, !failSafe.pendingKeyIsForUpdate else {
            return NOCResponse(.missingCsr, "no CSRRequest for AddNOC under this fail-safe")
        }
        guard !fabrics.isFull, let index = fabrics.nextIndex() else { return NOCResponse(.tableFull, "the fabric table is full") }
        if let failure = Self.checkChain(noc: noc, icac: icac, root: root, key: key) { return failure }
        let fabric: FabricInfo
        do {
            fabric = try FabricInfo(index: index, rootCertificate: root, noc: noc, icac: icac, operationalKey: key, epochIPK: ipk,
                                    vendorID: adminVendorID, label: "")
        } catch {
            return NOCResponse(.invalidNOC, "\(error)")
        }
        if let existing = fabrics.fabric(rootPublicKey: fabric.rootPublicKey, fabricID: fabric.fabricID) {
            return NOCResponse(.fabricConflict, "fabric 0x\(String(fabric.fabricID, radix: 16)) is already fabric \(existing.index)")
        }
        guard AccessControl.isOperationalNodeID(caseAdminSubject) || AccessControl.isCATSubject(caseAdminSubject) else {
            return NOCResponse(.invalidAdminSubject, "CaseAdminSubject 0x\(String(caseAdminSubject, radix: 16)) is neither a node ID nor a CAT")
        }
        fabrics.upsert(fabric)
        accessControl.append(AccessControlEntry(privilege: .administer, authMode: .case, subjects: [caseAdminSubject], fabricIndex: index))
        self.failSafe?.addedFabric = index
        self.failSafe?.fabricIndex = index
        self.failSafe?.addedRootCertificate = nil
        self.failSafe?.pendingOperationalKey = nil
        events.append(.fabricAdded(index))
        return NOCResponse(.ok, fabricIndex: index)
    }

    /// UpdateNOC (over CASE, on the accessing fabric): replaces the NOC (and ICAC) and the
    /// operational key with the one of the last CSRRequest(IsForUpdateNOC), under the fail-safe.
    public mutating func updateNOC(noc: [UInt8], icac: [UInt8]?, session: SessionInfo) throws(CommissioningError) -> NOCResponse {
        guard session.authMode == .case, let old = fabrics[session.fabricIndex] else {
            throw CommissioningError(.unsupportedAccess, "UpdateNOC needs a CASE session on an existing fabric")
        }
        guard let failSafe, failSafe.fabricIndex == old.index else { throw .failsafeRequired("UpdateNOC") }
        guard !failSafe.nocInvoked else { throw CommissioningError(.constraintError, "AddNOC or UpdateNOC already ran under this fail-safe") }
        guard let key = failSafe.pendingOperationalKey, failSafe.pendingKeyIsForUpdate else {
            return NOCResponse(.missingCsr, "no CSRRequest for UpdateNOC under this fail-safe")
        }
        if let failure = Self.checkChain(noc: noc, icac: icac, root: old.rootCertificate, key: key) { return failure }
        let updated: FabricInfo
        do {
            updated = try FabricInfo(index: old.index, rootCertificate: old.rootCertificate, noc: noc, icac: icac, operationalKey: key,
                                     epochIPK: old.epochIPK, vendorID: old.vendorID, label: old.label)
        } catch {
            return NOCResponse(.invalidNOC, "\(error)")
        }
        guard updated.fabricID == old.fabricID else { return NOCResponse(.invalidNOC, "the new NOC is for another fabric ID") }
        fabrics.upsert(updated)
        self.failSafe?.fabricBeforeUpdate = old
        self.failSafe?.pendingOperationalKey = nil
        events.append(.fabricUpdated(old.index))
        return NOCResponse(.ok, fabricIndex: old.index)
    }

    /// Parses and validates NOC (→ ICAC) → root and the NOC's key; nil when all is well.
    static func checkChain(noc: [UInt8], icac: [UInt8]?, root: [UInt8], key: [UInt8]) -> NOCResponse? {
        let leaf: MatterCertificate, intermediate: MatterCertificate?, rootCertificate: MatterCertificate
        do {
            leaf = try MatterCertificate(tlv: noc)
            intermediate = try icac.map { (b) throws(MatterSecurityError) in try MatterCertificate(tlv: b) }
            rootCertificate = try MatterCertificate(tlv: root)
        } catch {
            return NOCResponse(.invalidNOC, "a certificate does not parse: \(error)")
        }
        guard let pending = try? P256.Signing.PrivateKey(rawRepresentation: key),
            leaf.publicKey == Array(pending.publicKey.x963Representation)
        else { return NOCResponse(.invalidPublicKey, "the NOC does not certify the key of the last CSR") }
        guard let node = leaf.subject.nodeID, AccessControl.isOperationalNodeID(node) else {
            return NOCResponse(.invalidNodeOpID, "the NOC has no operational node ID")
        }
        do {
            _ = try OperationalChain(noc: leaf, icac: intermediate).validate(root: rootCertificate)
        } catch {
            return NOCResponse(.invalidNOC, "\(error)")
        }
        return nil
    }

    // MARK: - UpdateFabricLabel / RemoveFabric (11.18.6.11–12)

    /// UpdateFabricLabel on the accessing fabric: CONSTRAINT_ERROR past 32 bytes, LabelConflict
    /// when another fabric has the label.
    public mutating func updateFabricLabel(_ label: String, session: SessionInfo) throws(CommissioningError) -> NOCResponse {
        guard session.fabricIndex != 0, var fabric = fabrics[session.fabricIndex] else {
            throw CommissioningError(.unsupportedAccess, "UpdateFabricLabel needs a session on an existing fabric")
        }
        guard label.utf8.count <= Self.maximumLabelLength else { throw CommissioningError(.constraintError, "the label is longer than 32 bytes") }
        if !label.isEmpty, fabrics.fabrics.contains(where: { $0.index != fabric.index && $0.label == label }) {
            return NOCResponse(.labelConflict, "another fabric is labelled '\(label)'")
        }
        fabric.label = label
        fabrics.upsert(fabric)
        return NOCResponse(.ok, fabricIndex: fabric.index)
    }

    /// RemoveFabric: drops the fabric, its ACL entries and keys; InvalidFabricIndex when there
    /// is no such fabric. The owner closes the fabric's sessions after answering.
    public mutating func removeFabric(_ index: FabricIndex) -> NOCResponse {
        guard fabrics.remove(index) != nil else { return NOCResponse(.invalidFabricIndex, "no fabric \(index)") }
        accessControl.removeAll { $0.fabricIndex == index }
        if failSafe?.addedFabric == index { failSafe?.addedFabric = nil }
        if failSafe?.fabricBeforeUpdate?.index == index { failSafe?.fabricBeforeUpdate = nil }
        events.append(.fabricRemoved(index))
        return NOCResponse(.ok, fabricIndex: index)
    }
}
