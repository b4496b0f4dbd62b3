import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import MatterSecurity

@Suite struct MatterCertificateTests {
    @Test func sdkChainParsesAndItsSignaturesVerifyOverRebuiltDER() throws {
        let root = try MatterCertificate(tlv: SDKTestCertificates.rootA)
        let icac = try MatterCertificate(tlv: SDKTestCertificates.icacA1)
        let noc = try MatterCertificate(tlv: SDKTestCertificates.nodeA1)
        // The signatures were made over the X.509 TBS bytes: they verify only if the rebuilt DER is exact.
        #expect(root.isSigned(by: root.publicKey))
        #expect(icac.isSigned(by: root.publicKey))
        #expect(noc.isSigned(by: icac.publicKey))
        #expect(!noc.isSigned(by: root.publicKey))
        #expect(noc.subject.nodeID == 0x0000_0000_1122_3344)
        #expect(noc.subject.fabricID == 0xFABF_AB00_0000_000A)
        #expect(root.subject.rcacID == 0xCACA_CACA_0000_000A)
        #expect(icac.subject.icacID == 0x0A0A_0A0A_0000_00A1)
        #expect(noc.extendedKeyUsage == [.serverAuth, .clientAuth])
        #expect(root.keyUsage == [.keyCertSign, .crlSign])
        // TLV re-encoding is byte-exact.
        #expect(try root.tlvEncoded() == SDKTestCertificates.rootA)
        #expect(try icac.tlvEncoded() == SDKTestCertificates.icacA1)
        #expect(try noc.tlvEncoded() == SDKTestCertificates.nodeA1)
    }

    @Test func chainValidates() throws {
        let root = try MatterCertificate(tlv: SDKTestCertificates.rootA)
        let chain = OperationalChain(
            noc: try MatterCertificate(tlv: SDKTestCertificates.nodeA1), icac: try MatterCertificate(tlv: SDKTestCertificates.icacA1))
        let identity = try chain.validate(root: root, at: 800_000_000)  // 2025
        #expect(identity.nodeID == 0x1122_3344)
        #expect(identity.fabricID == 0xFABF_AB00_0000_000A)
        // Outside the validity period.
        #expect(throws: MatterSecurityError.self) { try chain.validate(root: root, at: 100) }
    }

    @Test func derRoundTripAndX509View() throws {
        for tlv in [SDKTestCertificates.rootA, SDKTestCertificates.icacA1, SDKTestCertificates.nodeA1] {
            let cert = try MatterCertificate(tlv: tlv)
            let der = try cert.derEncoded()
            let x509 = try Certificate(derEncoded: der)  // swift-certificates reads it
            #expect(x509.signatureAlgorithm == .ecdsaWithSHA256)
            let back = try MatterCertificate(derEncoded: der)
            #expect(back == cert)
            #expect(try back.tlvEncoded() == tlv)
        }
        let noc = try Certificate(derEncoded: try MatterCertificate(tlv: SDKTestCertificates.nodeA1).derEncoded())
        #expect(noc.subject.description.contains("0000000011223344"))
        #expect(noc.notValidBefore.timeIntervalSince1970 == 946_684_800 + 0x2A07_B258)
    }

    @Test func tamperedChainsFail() throws {
        let root = try MatterCertificate(tlv: SDKTestCertificates.rootA)
        let icac = try MatterCertificate(tlv: SDKTestCertificates.icacA1)
        var noc = try MatterCertificate(tlv: SDKTestCertificates.nodeA1)
        noc.subject = MatterDistinguishedName([.matterNodeID(0x1122_3345), .matterFabricID(0xFABF_AB00_0000_000A)])
        #expect(throws: MatterSecurityError.self) { try OperationalChain(noc: noc, icac: icac).validate(root: root) }
        // Missing ICAC: the NOC's issuer is not the root.
        let real = try MatterCertificate(tlv: SDKTestCertificates.nodeA1)
        #expect(throws: MatterSecurityError.self) { try OperationalChain(noc: real, icac: nil).validate(root: root) }
        // A root made by someone else with the same names does not anchor the chain.
        let impostorKey = P256.Signing.PrivateKey()
        let impostor = try MatterCertificate.issue(
            serialNumber: root.serialNumber, issuer: root.subject, subject: root.subject, subjectKey: impostorKey.publicKey,
            notBefore: root.notBefore, notAfter: root.notAfter, extensions: root.extensions, issuerKey: impostorKey)
        #expect(throws: MatterSecurityError.self) { try OperationalChain(noc: real, icac: icac).validate(root: impostor) }
    }

    @Test func issuesAFabricAndValidatesIt() throws {
        let fabric = try TestFabric(fabricID: 0x2906_C908_D115_D362, nodeID: 0x0000_0000_0000_0C01)
        let identity = try OperationalChain(noc: fabric.noc, icac: fabric.icac).validate(root: fabric.root, at: 1000)
        #expect(identity.nodeID == 0xC01)
        #expect(identity.fabricID == 0x2906_C908_D115_D362)
        // The DER form of what we issue parses with swift-certificates and verifies with it.
        let x509Root = try Certificate(derEncoded: try fabric.root.derEncoded())
        let x509NOC = try Certificate(derEncoded: try fabric.noc.derEncoded())
        #expect(x509NOC.issuer != x509Root.subject)  // signed by the ICAC
        let x509ICAC = try Certificate(derEncoded: try fabric.icac!.derEncoded())
        #expect(x509ICAC.publicKey.isValidSignature(x509NOC.signature, for: x509NOC))
        #expect(x509Root.publicKey.isValidSignature(x509ICAC.signature, for: x509ICAC))
    }

    @Test func compressedFabricIDSpecExample() throws {
        // Core Specification 4.3.2.2 example.
        let rootKey = hex("04" + "4a9f42b1ca4840d37292bbc7f6a7e11e22200c976fc900dbc98a7a383a641cb8254a2e56d4e295a847943b4e3897c4a773e930277b4d9fbede8a052686bfacfa")
        #expect(try Fabric.compressedFabricID(rootPublicKey: rootKey, fabricID: 0x2906_C908_D115_D362) == 0x87E1_B004_E235_A130)
        #expect(Fabric.operationalInstanceName(compressedFabricID: 0x87E1_B004_E235_A130, nodeID: 0xDE)
            == "87E1B004E235A130-00000000000000DE")
    }

    @Test func csrCarriesTheKeyAndIsSelfSigned() throws {
        let key = P256.Signing.PrivateKey()
        let der = try Fabric.certificateSigningRequest(for: key)
        #expect(try Fabric.publicKey(ofCSR: der).rawRepresentation == key.publicKey.rawRepresentation)
        var tampered = der
        tampered[tampered.count - 5] ^= 0x01
        #expect(throws: MatterSecurityError.self) { try Fabric.publicKey(ofCSR: tampered) }
    }

    @Test func refusesMalformedTLV() throws {
        var bad = SDKTestCertificates.nodeA1
        bad[bad.count - 1] = 0x00  // no end of container
        #expect(throws: MatterSecurityError.self) { try MatterCertificate(tlv: bad) }
        #expect(throws: MatterSecurityError.self) { try MatterCertificate(tlv: [0x15, 0x18]) }
        #expect(throws: MatterSecurityError.self) { try MatterCertificate(derEncoded: [0x30, 0x00]) }
    }
}

/// A fabric made for tests: RCAC → ICAC → NOC, with the NOC's key.
struct TestFabric {
    let rootKey = P256.Signing.PrivateKey()
    let icacKey = P256.Signing.PrivateKey()
    let nodeKey = P256.Signing.PrivateKey()
    let root: MatterCertificate
    let icac: MatterCertificate?
    let noc: MatterCertificate

    init(fabricID: UInt64, nodeID: UInt64, cats: [UInt32] = []) throws {
        let rootName = MatterDistinguishedName([.matterRCACID(1), .matterFabricID(fabricID)])
        let icacName = MatterDistinguishedName([.matterICACID(2), .matterFabricID(fabricID)])
        let rootSKID = MatterCertificate.keyIdentifier(Array(rootKey.publicKey.x963Representation))
        let icacSKID = MatterCertificate.keyIdentifier(Array(icacKey.publicKey.x963Representation))
        root = try .issue(
            serialNumber: [1], issuer: rootName, subject: rootName, subjectKey: rootKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: true, pathLength: nil), .keyUsage([.keyCertSign, .crlSign]),
                         .subjectKeyIdentifier(rootSKID), .authorityKeyIdentifier(rootSKID)],
            issuerKey: rootKey)
        icac = try .issue(
            serialNumber: [2], issuer: rootName, subject: icacName, subjectKey: icacKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: true, pathLength: 0), .keyUsage([.keyCertSign, .crlSign]),
                         .subjectKeyIdentifier(icacSKID), .authorityKeyIdentifier(rootSKID)],
            issuerKey: rootKey)
        noc = try .issue(
            serialNumber: [3], issuer: icacName,
            subject: MatterDistinguishedName([.matterNodeID(nodeID), .matterFabricID(fabricID)] + cats.map { .matterCASEAuthenticatedTag($0) }),
            subjectKey: nodeKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]),
                         .extendedKeyUsage([.clientAuth, .serverAuth]),
                         .subjectKeyIdentifier(MatterCertificate.keyIdentifier(Array(nodeKey.publicKey.x963Representation))),
                         .authorityKeyIdentifier(icacSKID)],
            issuerKey: icacKey)
    }
}
