import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import MatterSecurity

/// Device attestation (Core Specification 6.2, 6.3, 11.18.4.7) with the CSA's public test
/// material: the installation DAC chains to the test PAA, the CD verifies with the test CD key,
/// and every rule the verifier enforces is broken once.
@Suite struct DeviceAttestationTests {
    let nonce = (0..<32).map { UInt8($0) }
    let challenge = [UInt8](repeating: 0xA5, count: 16)

    /// A CA certificate made here (a "self-made root" or intermediate), VID/PID in the subject.
    static func makeCA(
        name: String, vendorID: UInt16?, productID: UInt16? = nil, key: P256.Signing.PrivateKey, pathLength: Int,
        issuerName: DistinguishedName? = nil, issuerKey: P256.Signing.PrivateKey? = nil, issuerKeyID: [UInt8]? = nil
    ) throws -> [UInt8] {
        var rdns = [RelativeDistinguishedName(.init(type: .RDNAttributeType.commonName, utf8String: name))]
        if let vendorID { rdns.append(RelativeDistinguishedName(.init(type: DeviceAttestationCertificate.vendorIDOID, utf8String: DeviceAttestationCertificate.hex4(vendorID)))) }
        if let productID { rdns.append(RelativeDistinguishedName(.init(type: DeviceAttestationCertificate.productIDOID, utf8String: DeviceAttestationCertificate.hex4(productID)))) }
        let subject = DistinguishedName(rdns)
        let skid = MatterCertificate.keyIdentifier(Array(key.publicKey.x963Representation))
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: pathLength))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(keyIdentifier: skid[...])
            AuthorityKeyIdentifier(keyIdentifier: (issuerKeyID ?? skid)[...])
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(bytes: [0x11, 0x22]), publicKey: .init(key.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 1_600_000_000), notValidAfter: Date(timeIntervalSince1970: 2_600_000_000),
            issuer: issuerName ?? subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: .init(issuerKey ?? key))
        var s = DER.Serializer()
        try s.serialize(certificate)
        return s.serializedBytes
    }

    func subject(of der: [UInt8]) throws -> DistinguishedName { try Certificate(derEncoded: der).subject }

    func dac(vendorID: UInt16 = 0xFFF1, productID: UInt16 = 0x8000, key: P256.Signing.PrivateKey,
             notBefore: Date = Date(timeIntervalSince1970: 1_625_097_600)) throws -> [UInt8] {
        try DeviceAttestationCertificate.issue(
            commonName: "Test DAC", vendorID: vendorID, productID: productID, publicKey: key.publicKey, serialNumber: [0x01, 0x02],
            notBefore: notBefore, notAfter: nil,
            issuerCertificate: DevelopmentAttestation.paiCertificate, issuerKey: try DevelopmentAttestation.paiPrivateKey())
    }

    func cd(vendorID: UInt16 = 0xFFF1, productIDs: [UInt16] = [0x8000], type: CertificationDeclaration.CertificationType = .developmentAndTest,
            authorizedPAAs: [[UInt8]]? = nil) -> CertificationDeclaration {
        CertificationDeclaration(
            vendorID: vendorID, productIDs: productIDs, deviceTypeID: 0x000E, certificateID: "DEV0000HEARTH000000", securityLevel: 0,
            securityInformation: 0, versionNumber: 1, certificationType: type, authorizedPAAs: authorizedPAAs)
    }

    func signedCD(_ declaration: CertificationDeclaration) throws -> [UInt8] {
        try declaration.signed(with: try DevelopmentAttestation.cdSigningPrivateKey(), certificate: DevelopmentAttestation.cdSigningCertificate)
    }

    /// Runs the verifier on a device built from the parts given.
    func verify(
        dacKey: P256.Signing.PrivateKey, dac: [UInt8], pai: [UInt8] = DevelopmentAttestation.paiCertificate, cms: [UInt8],
        verifier: DeviceAttestationVerifier = .development, signWith: P256.Signing.PrivateKey? = nil,
        answerNonce: [UInt8]? = nil, signChallenge: [UInt8]? = nil
    ) throws -> DeviceAttestationVerifier.Result {
        let elements = try AttestationElements(certificationDeclaration: cms, attestationNonce: answerNonce ?? nonce, timestamp: 0).encoded()
        let signature = try AttestationElements.sign(elements, attestationChallenge: signChallenge ?? challenge, with: signWith ?? dacKey)
        return try verifier.verify(
            dac: dac, pai: pai, elements: elements, signature: signature, nonce: nonce, attestationChallenge: challenge,
            at: Date(timeIntervalSince1970: 1_800_000_000))
    }

    func failure(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch { return "\(error)" }
    }

    @Test func publicTestPAI_isSignedByTestPAA() throws {
        let paa = try DeviceAttestationCertificate(derEncoded: DevelopmentAttestation.paaCertificate)
        let pai = try DeviceAttestationCertificate(derEncoded: DevelopmentAttestation.paiCertificate)
        #expect(pai.isSigned(by: paa) && paa.isSigned(by: paa))
        #expect(paa.vendorID == 0xFFF1 && paa.productID == nil && paa.isCA == true && paa.pathLength == 1)
        #expect(pai.vendorID == 0xFFF1 && pai.productID == 0x8000 && pai.isCA == true && pai.pathLength == 0)
        #expect(paa.subjectKeyID == [0x6A, 0xFD, 0x22, 0x77, 0x1F, 0x51, 0x1F, 0xEC, 0xBF, 0x16, 0x41, 0x97, 0x67, 0x10, 0xDC, 0xDC, 0x31, 0xA1, 0x71, 0x7E])
        #expect(pai.authorityKeyID == paa.subjectKeyID)
        // The embedded private key belongs to the embedded PAI certificate.
        #expect(try DevelopmentAttestation.paiPrivateKey().publicKey.rawRepresentation == pai.publicKey.rawRepresentation)
        let cdSigner = try DeviceAttestationCertificate(derEncoded: DevelopmentAttestation.cdSigningCertificate)
        #expect(try DevelopmentAttestation.cdSigningPrivateKey().publicKey.rawRepresentation == cdSigner.publicKey.rawRepresentation)
        #expect(cdSigner.subjectKeyID?.first == 0x62)
    }

    @Test func installationCredentials_passTheDevelopmentVerifier() throws {
        let credentials = try DevelopmentAttestation.installationCredentials()
        let (elements, signature) = try credentials.attest(nonce: nonce, attestationChallenge: challenge)
        let result = try DeviceAttestationVerifier.development.verify(
            dac: credentials.dacCertificate, pai: credentials.paiCertificate, elements: elements, signature: signature, nonce: nonce,
            attestationChallenge: challenge, basicInformation: (0xFFF1, 0x8000))
        #expect(result.vendorID == 0xFFF1 && result.productID == 0x8000)
        #expect(result.paaKeyID == (try DeviceAttestationCertificate(derEncoded: DevelopmentAttestation.paaCertificate)).subjectKeyID)
        #expect(result.certificationDeclaration.certificationType == .developmentAndTest)
        // Two installations get different DAC keys.
        let other = try DevelopmentAttestation.installationCredentials()
        #expect(other.dacCertificate != credentials.dacCertificate)
    }

    @Test func selfMadeRoot_failsAttestation() throws {
        let paaKey = P256.Signing.PrivateKey(), paiKey = P256.Signing.PrivateKey(), dacKey = P256.Signing.PrivateKey()
        let paa = try Self.makeCA(name: "Hearth Self-Made PAA", vendorID: 0xFFF1, key: paaKey, pathLength: 1)
        let paaSKID = MatterCertificate.keyIdentifier(Array(paaKey.publicKey.x963Representation))
        let pai = try Self.makeCA(
            name: "Hearth Self-Made PAI", vendorID: 0xFFF1, productID: 0x8000, key: paiKey, pathLength: 0,
            issuerName: try subject(of: paa), issuerKey: paaKey, issuerKeyID: paaSKID)
        let dac = try DeviceAttestationCertificate.issue(
            commonName: "Self-made DAC", vendorID: 0xFFF1, productID: 0x8000, publicKey: dacKey.publicKey, serialNumber: [7],
            notBefore: Date(timeIntervalSince1970: 1_609_459_200), notAfter: nil, issuerCertificate: pai, issuerKey: paiKey)
        let cms = try signedCD(cd())
        let error = failure { _ = try verify(dacKey: dacKey, dac: dac, pai: pai, cms: cms) }
        #expect(error?.contains("not a trusted PAA") == true, "\(error ?? "passed")")
        // The same chain passes once its root is trusted: the refusal above is about trust only.
        var trusting = DeviceAttestationVerifier.development
        trusting.trustedPAAs.append(paa)
        #expect(try verify(dacKey: dacKey, dac: dac, pai: pai, cms: cms, verifier: trusting).vendorID == 0xFFF1)

        // A forged PAI that names the test PAA as its issuer (its key ID and DN) but is signed by another key.
        let testPAASKID = try DeviceAttestationCertificate(derEncoded: DevelopmentAttestation.paaCertificate).subjectKeyID
        let forged = try Self.makeCA(
            name: "Matter Test PAI", vendorID: 0xFFF1, productID: 0x8000, key: paiKey, pathLength: 0,
            issuerName: try subject(of: DevelopmentAttestation.paaCertificate), issuerKey: paaKey, issuerKeyID: testPAASKID)
        let forgedDAC = try DeviceAttestationCertificate.issue(
            commonName: "Forged DAC", vendorID: 0xFFF1, productID: 0x8000, publicKey: dacKey.publicKey, serialNumber: [8],
            notBefore: Date(timeIntervalSince1970: 1_609_459_200), notAfter: nil, issuerCertificate: forged, issuerKey: paiKey)
        let forgedError = failure { _ = try verify(dacKey: dacKey, dac: forgedDAC, pai: forged, cms: cms) }
        #expect(forgedError?.contains("PAI is not signed by the PAA") == true, "\(forgedError ?? "passed")")
    }

    /// CHIP's verifier checks the chain at the DAC's notBefore: a DAC dated before the test PAI
    /// (2021-06-28 14:23:43) is refused even though every certificate is valid today.
    @Test func dacIssuedBeforeItsPAI_isRefused() throws {
        let key = P256.Signing.PrivateKey()
        let cms = try signedCD(cd())
        let early = failure { _ = try verify(dacKey: key, dac: try dac(key: key, notBefore: Date(timeIntervalSince1970: 1_609_459_200)), cms: cms) }
        #expect(early?.contains("not yet valid at the DAC's notBefore") == true, "\(early ?? "passed")")
        #expect(try verify(dacKey: key, dac: try dac(key: key), cms: cms).vendorID == 0xFFF1)
        let installation = try DeviceAttestationCertificate(derEncoded: try DevelopmentAttestation.installationCredentials().dacCertificate)
        let pai = try DeviceAttestationCertificate(derEncoded: DevelopmentAttestation.paiCertificate)
        #expect(installation.notBefore >= pai.notBefore)
    }

    @Test func vendorAndProductRules() throws {
        let key = P256.Signing.PrivateKey()
        let cms = try signedCD(cd())
        let wrongVendor = failure { _ = try verify(dacKey: key, dac: try dac(vendorID: 0xFFF2, key: key), cms: cms) }
        #expect(wrongVendor?.contains("vendor ID") == true, "\(wrongVendor ?? "passed")")
        let wrongProduct = failure { _ = try verify(dacKey: key, dac: try dac(productID: 0x8001, key: key), cms: cms) }
        #expect(wrongProduct?.contains("product ID is not the PAI's") == true, "\(wrongProduct ?? "passed")")
        let cdOtherVendor = failure { _ = try verify(dacKey: key, dac: try dac(key: key), cms: try signedCD(cd(vendorID: 0xFFF2))) }
        #expect(cdOtherVendor?.contains("CD's vendor ID") == true, "\(cdOtherVendor ?? "passed")")
        let cdOtherProduct = failure { _ = try verify(dacKey: key, dac: try dac(key: key), cms: try signedCD(cd(productIDs: [0x8001, 0x8002]))) }
        #expect(cdOtherProduct?.contains("not in the CD") == true, "\(cdOtherProduct ?? "passed")")
        // A CD listing several products including ours passes.
        #expect(try verify(dacKey: key, dac: try dac(key: key), cms: try signedCD(cd(productIDs: [0x8001, 0x8000]))).productID == 0x8000)
    }

    @Test func certificationDeclaration_signatureAndContent() throws {
        let declaration = cd(productIDs: [0x8000, 0x8001], authorizedPAAs: [[UInt8](repeating: 9, count: 20)])
        #expect(try CertificationDeclaration(tlv: try declaration.tlvEncoded()) == declaration)
        let cms = try signedCD(declaration)
        let (read, signer) = try CertificationDeclaration.verify(cms, signers: [DevelopmentAttestation.cdSigningCertificate])
        #expect(read == declaration && signer.count == 20)

        // One flipped byte of the content breaks the signature.
        let content = try declaration.tlvEncoded()
        var tampered = cms
        let at = try #require(cms.indices.first { Array(cms[$0..<min($0 + content.count, cms.count)]) == content })
        tampered[at + content.count - 3] ^= 0x01
        #expect(failure { _ = try CertificationDeclaration.verify(tampered, signers: [DevelopmentAttestation.cdSigningCertificate]) } != nil)

        // Signed by a key that is not a trusted CD signer.
        let otherKey = P256.Signing.PrivateKey()
        let otherCert = try Self.makeCA(name: "Other CD Signer", vendorID: nil, key: otherKey, pathLength: 1)
        let foreign = try declaration.signed(with: otherKey, certificate: otherCert)
        let unknown = failure { _ = try CertificationDeclaration.verify(foreign, signers: [DevelopmentAttestation.cdSigningCertificate]) }
        #expect(unknown?.contains("unknown key") == true, "\(unknown ?? "passed")")

        // The authorized PAA list must name the chain's PAA.
        let key = P256.Signing.PrivateKey()
        let notListed = failure { _ = try verify(dacKey: key, dac: try dac(key: key), cms: cms) }
        #expect(notListed?.contains("authorized PAA") == true, "\(notListed ?? "passed")")
        let testPAASKID = try #require(try DeviceAttestationCertificate(derEncoded: DevelopmentAttestation.paaCertificate).subjectKeyID)
        #expect(throws: Never.self) { _ = try verify(dacKey: key, dac: try dac(key: key), cms: try signedCD(cd(authorizedPAAs: [testPAASKID]))) }

        // A production verifier refuses a development-and-test CD.
        var production = DeviceAttestationVerifier.development
        production.acceptsDevelopmentCertificationType = false
        let refused = failure { _ = try verify(dacKey: key, dac: try dac(key: key), cms: try signedCD(cd()), verifier: production) }
        #expect(refused?.contains("development and test") == true, "\(refused ?? "passed")")
        #expect(try verify(dacKey: key, dac: try dac(key: key), cms: try signedCD(cd(type: .official)), verifier: production).vendorID == 0xFFF1)
    }

    @Test func attestationSignature_bindsNonceChallengeAndKey() throws {
        let key = P256.Signing.PrivateKey()
        let device = try dac(key: key)
        let cms = try signedCD(cd())
        #expect(try verify(dacKey: key, dac: device, cms: cms).vendorID == 0xFFF1)
        let otherNonce = failure { _ = try verify(dacKey: key, dac: device, cms: cms, answerNonce: [UInt8](repeating: 1, count: 32)) }
        #expect(otherNonce?.contains("nonce") == true, "\(otherNonce ?? "passed")")
        let otherChallenge = failure { _ = try verify(dacKey: key, dac: device, cms: cms, signChallenge: [UInt8](repeating: 0, count: 16)) }
        #expect(otherChallenge?.contains("attestation signature") == true, "\(otherChallenge ?? "passed")")
        let otherKey = failure { _ = try verify(dacKey: key, dac: device, cms: cms, signWith: P256.Signing.PrivateKey()) }
        #expect(otherKey?.contains("attestation signature") == true, "\(otherKey ?? "passed")")
        // Elements round-trip, and oversized elements are refused.
        let elements = AttestationElements(certificationDeclaration: cms, attestationNonce: nonce, timestamp: 77, firmwareInformation: [1, 2])
        #expect(try AttestationElements(decoding: try elements.encoded()) == elements)
        let big = AttestationElements(certificationDeclaration: [UInt8](repeating: 0, count: 900), attestationNonce: nonce, timestamp: 0)
        #expect(throws: MatterSecurityError.self) { try big.encoded() }
    }

    /// An independent implementation checks the same bytes: OpenSSL verifies the DAC chain and
    /// the CD's CMS signature. Skipped when the openssl command is not installed.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func openSSL_acceptsTheChainAndTheCD() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-attestation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let credentials = try DevelopmentAttestation.installationCredentials()
        func pem(_ der: [UInt8]) -> String {
            let b64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return "-----BEGIN CERTIFICATE-----\n\(b64)\n-----END CERTIFICATE-----\n"
        }
        try pem(DevelopmentAttestation.paaCertificate).write(to: dir.appendingPathComponent("paa.pem"), atomically: true, encoding: .utf8)
        try pem(credentials.paiCertificate).write(to: dir.appendingPathComponent("pai.pem"), atomically: true, encoding: .utf8)
        try pem(credentials.dacCertificate).write(to: dir.appendingPathComponent("dac.pem"), atomically: true, encoding: .utf8)
        try pem(DevelopmentAttestation.cdSigningCertificate).write(to: dir.appendingPathComponent("cd-signer.pem"), atomically: true, encoding: .utf8)
        try Data(credentials.certificationDeclaration).write(to: dir.appendingPathComponent("cd.der"))
        func openssl(_ args: [String]) throws -> (Int32, String) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            p.arguments = args
            p.currentDirectoryURL = dir
            let out = Pipe()
            p.standardOutput = out
            p.standardError = out
            try p.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            return (p.terminationStatus, text)
        }
        let chain = try openssl(["verify", "-x509_strict", "-CAfile", "paa.pem", "-untrusted", "pai.pem", "dac.pem"])
        #expect(chain.0 == 0, "\(chain.1)")
        let cms = try openssl(["cms", "-verify", "-inform", "DER", "-in", "cd.der", "-binary", "-certfile", "cd-signer.pem",
                               "-noverify", "-out", "cd.tlv"])
        #expect(cms.0 == 0, "\(cms.1)")
        let content = try Data(contentsOf: dir.appendingPathComponent("cd.tlv"))
        #expect(try CertificationDeclaration(tlv: Array(content)).vendorID == 0xFFF1)
        // And a chain that ends at a self-made root is refused by OpenSSL too.
        let rootKey = P256.Signing.PrivateKey()
        try pem(try Self.makeCA(name: "Self-Made PAA", vendorID: 0xFFF1, key: rootKey, pathLength: 1))
            .write(to: dir.appendingPathComponent("self.pem"), atomically: true, encoding: .utf8)
        #expect(try openssl(["verify", "-CAfile", "self.pem", "-untrusted", "pai.pem", "dac.pem"]).0 != 0)
    }
}
