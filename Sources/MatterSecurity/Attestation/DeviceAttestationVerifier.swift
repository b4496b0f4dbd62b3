public import Foundation

/// A commissioner's device attestation check (Core Specification 6.2.3): the DAC chains through
/// the PAI to a trusted PAA, the vendor and product IDs agree along the chain and with the
/// Certification Declaration, the CD is signed by a trusted CD signing key, and the device
/// signed the attestation elements (with the commissioner's nonce) over the session's
/// attestation challenge with its DAC key.
///
/// Pure: give it the trust stores and the time; it does no I/O.
public struct DeviceAttestationVerifier: Sendable {
    /// Trusted PAA certificates (X.509 DER).
    public var trustedPAAs: [[UInt8]]
    /// Trusted CD signing certificates (X.509 DER).
    public var trustedCDSigners: [[UInt8]]
    /// Whether a CD of certification_type "development and test" is accepted (only in
    /// development: production controllers refuse it).
    public var acceptsDevelopmentCertificationType: Bool

    public init(trustedPAAs: [[UInt8]], trustedCDSigners: [[UInt8]], acceptsDevelopmentCertificationType: Bool) {
        self.trustedPAAs = trustedPAAs
        self.trustedCDSigners = trustedCDSigners
        self.acceptsDevelopmentCertificationType = acceptsDevelopmentCertificationType
    }

    /// The verifier a development controller uses: the CSA test PAA and test CD signing key.
    public static let development = DeviceAttestationVerifier(
        trustedPAAs: [DevelopmentAttestation.paaCertificate], trustedCDSigners: [DevelopmentAttestation.cdSigningCertificate],
        acceptsDevelopmentCertificationType: true)

    /// What a successful attestation establishes.
    public struct Result: Sendable, Hashable {
        public let vendorID: UInt16
        public let productID: UInt16
        public let paaKeyID: [UInt8]
        public let certificationDeclaration: CertificationDeclaration
    }

    /// Verifies an attestation response.
    ///
    /// - Parameters:
    ///   - dac, pai: the certificates the device returned for CertificateChainRequest (DER).
    ///   - elements, signature: the AttestationResponse fields.
    ///   - nonce: the 32-byte nonce this commissioner sent in AttestationRequest.
    ///   - attestationChallenge: the PASE/CASE session's attestation challenge (16 bytes).
    ///   - basicInformation: the VID/PID the device reports in Basic Information, when read.
    ///   - date: the time to check validity periods against.
    /// - Throws: `MatterSecurityError` saying which rule failed.
    public func verify(
        dac dacDER: [UInt8], pai paiDER: [UInt8], elements: [UInt8], signature: [UInt8], nonce: [UInt8],
        attestationChallenge: [UInt8], basicInformation: (vendorID: UInt16, productID: UInt16)? = nil, at date: Date = Date()
    ) throws(MatterSecurityError) -> Result {
        let dac = try DeviceAttestationCertificate(derEncoded: dacDER)
        let pai = try DeviceAttestationCertificate(derEncoded: paiDER)

        // 1. The device signed elements ‖ challenge with the DAC key, and echoed our nonce.
        guard AttestationElements.isValidSignature(signature, elements: elements, attestationChallenge: attestationChallenge, key: dac.publicKey) else {
            throw .verificationFailed("the attestation signature does not verify with the DAC key")
        }
        let parsed = try AttestationElements(decoding: elements)
        guard parsed.attestationNonce == nonce else { throw .verificationFailed("the attestation nonce is not the one sent") }

        // 2. PAA → PAI → DAC.
        let paa = try trustedPAA(for: pai)
        try checkPAA(paa, at: date)
        try check(pai.isIssued(by: paa) && pai.isSigned(by: paa), "the PAI is not signed by the PAA")
        try check(pai.isCA == true && pai.pathLength == 0, "the PAI is not a CA with path length 0")
        try check(pai.canSignCertificates, "the PAI may not sign certificates")
        try check(pai.authorityKeyID == paa.subjectKeyID, "the PAI's authority key ID is not the PAA's key ID")
        try check(pai.isValid(at: date), "the PAI is not valid at \(date)")
        try check(dac.isIssued(by: pai) && dac.isSigned(by: pai), "the DAC is not signed by the PAI")
        try check(dac.isCA == false, "the DAC is a CA or lacks basic constraints")
        try check(dac.canSignDigitally && !dac.canSignCertificates, "the DAC's key usage is not digitalSignature only")
        try check(dac.authorityKeyID == pai.subjectKeyID, "the DAC's authority key ID is not the PAI's key ID")
        try check(dac.isValid(at: date), "the DAC is not valid at \(date)")
        // The chain must also hold at the DAC's issuance: commissioners without a trusted clock
        // (the CHIP SDK's verifier among them) check PAA and PAI validity at the DAC's notBefore.
        try check(paa.isValid(at: dac.notBefore) && pai.isValid(at: dac.notBefore), "the PAA or PAI is not yet valid at the DAC's notBefore \(dac.notBefore)")

        // 3. Vendor and product IDs along the chain (6.2.3.1).
        guard let vendorID = dac.vendorID, let productID = dac.productID else { throw .certificate("the DAC lacks a vendor or product ID") }
        guard let paiVendorID = pai.vendorID else { throw .certificate("the PAI lacks a vendor ID") }
        try check(paiVendorID == vendorID, "the DAC's vendor ID \(vendorID) is not the PAI's \(paiVendorID)")
        if let paaVendorID = paa.vendorID { try check(paaVendorID == vendorID, "the PAA's vendor ID \(paaVendorID) is not the DAC's \(vendorID)") }
        if let paiProductID = pai.productID { try check(paiProductID == productID, "the DAC's product ID is not the PAI's") }

        // 4. The Certification Declaration.
        let (cd, _) = try CertificationDeclaration.verify(parsed.certificationDeclaration, signers: trustedCDSigners)
        try check(cd.formatVersion == 1, "unknown CD format version \(cd.formatVersion)")
        if cd.certificationType == .developmentAndTest {
            try check(acceptsDevelopmentCertificationType, "the CD is for development and test only")
        }
        if let originVendorID = cd.dacOriginVendorID, let originProductID = cd.dacOriginProductID {
            try check(originVendorID == vendorID && originProductID == productID, "the DAC is not from the CD's DAC origin")
        } else {
            try check(cd.vendorID == vendorID, "the CD's vendor ID \(cd.vendorID) is not the DAC's \(vendorID)")
            try check(cd.productIDs.contains(productID), "the DAC's product ID is not in the CD")
        }
        if let basicInformation {
            try check(basicInformation.vendorID == cd.vendorID, "Basic Information's vendor ID is not the CD's")
            try check(cd.productIDs.contains(basicInformation.productID), "Basic Information's product ID is not in the CD")
        }
        if let authorized = cd.authorizedPAAs {
            try check(paa.subjectKeyID.map { authorized.contains($0) } ?? false, "the PAA is not in the CD's authorized PAA list")
        }
        return Result(vendorID: vendorID, productID: productID, paaKeyID: paa.subjectKeyID ?? [], certificationDeclaration: cd)
    }

    private func trustedPAA(for pai: DeviceAttestationCertificate) throws(MatterSecurityError) -> DeviceAttestationCertificate {
        for der in trustedPAAs {
            let candidate = try DeviceAttestationCertificate(derEncoded: der)
            if candidate.subjectKeyID != nil, candidate.subjectKeyID == pai.authorityKeyID { return candidate }
        }
        throw .verificationFailed("the PAI's issuer is not a trusted PAA")
    }

    private func checkPAA(_ paa: DeviceAttestationCertificate, at date: Date) throws(MatterSecurityError) {
        try check(paa.isSigned(by: paa) && paa.isIssued(by: paa), "the PAA is not self-signed")
        try check(paa.isCA == true && (paa.pathLength ?? 1) >= 1, "the PAA is not a CA that may sign a PAI")
        try check(paa.canSignCertificates, "the PAA may not sign certificates")
        try check(paa.isValid(at: date), "the PAA is not valid at \(date)")
    }

    private func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(MatterSecurityError) {
        if !condition { throw .verificationFailed(message()) }
    }
}
