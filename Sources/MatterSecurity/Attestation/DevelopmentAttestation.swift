public import Crypto
public import Foundation

/// The CSA's **public test** attestation material (vendor ID 0xFFF1), as published in the Matter
/// SDK's `credentials/test/attestation/` and `credentials/test/certification-declaration/`.
///
/// DEVELOPMENT ONLY. Every private key below is public: anybody can sign with it. Controllers
/// accept this chain only when their test PAA (and test CD signing key) is trusted, which is
/// the case for the CHIP tool and SDK controllers in development mode, and never for Apple
/// Home, Google Home, Amazon Alexa or SmartThings in production (see docs/matter-security.md).
public enum DevelopmentAttestation {
    /// The test vendor ID the material is issued for.
    public static let vendorID: UInt16 = 0xFFF1
    /// The product ID the test PAI is restricted to (its subject carries it).
    public static let productID: UInt16 = 0x8000

    /// "Matter Test PAA" (VID 0xFFF1), SKID 6A:FD:22:77:…:71:7E: the root a development
    /// controller must trust (`Chip-Test-PAA-FFF1-Cert`).
    public static let paaCertificate: [UInt8] = base64(
        """
        MIIBvTCCAWSgAwIBAgIITqjoMYLUHBwwCgYIKoZIzj0EAwIwMDEYMBYGA1UEAwwPTWF0dGVyIFRlc3QgUEFBMRQwEgYKKwYBBAGConwCAQwERkZG\
        MTAgFw0yMTA2MjgxNDIzNDNaGA85OTk5MTIzMTIzNTk1OVowMDEYMBYGA1UEAwwPTWF0dGVyIFRlc3QgUEFBMRQwEgYKKwYBBAGConwCAQwERkZG\
        MTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABLbLY3KIfyko9brIGqnZOuJDHK2p154kL2UXfvnO2TKijs0Duq9qj8oYShpQNUKWDUU/MD8fGUId\
        dR6Pjxqam3WjZjBkMBIGA1UdEwEB/wQIMAYBAf8CAQEwDgYDVR0PAQH/BAQDAgEGMB0GA1UdDgQWBBRq/SJ3H1Ef7L8WQZdnENzcMaFxfjAfBgNV\
        HSMEGDAWgBRq/SJ3H1Ef7L8WQZdnENzcMaFxfjAKBggqhkjOPQQDAgNHADBEAiBQqoAC9NkyqaAFOPZTaK0P/8jvu8m+t9pWmDXPmqdRDgIgI7rI\
        /g8j51RFtlM5CBpHmUkpxyqvChVI1A0DTVFLJd4=
        """)

    /// "Matter Test PAI" (VID 0xFFF1, PID 0x8000), signed by the test PAA
    /// (`Chip-Test-PAI-FFF1-8000-Cert`).
    public static let paiCertificate: [UInt8] = base64(
        """
        MIIB1DCCAXqgAwIBAgIIPmzmUJrYQM0wCgYIKoZIzj0EAwIwMDEYMBYGA1UEAwwPTWF0dGVyIFRlc3QgUEFBMRQwEgYKKwYBBAGConwCAQwERkZG\
        MTAgFw0yMTA2MjgxNDIzNDNaGA85OTk5MTIzMTIzNTk1OVowRjEYMBYGA1UEAwwPTWF0dGVyIFRlc3QgUEFJMRQwEgYKKwYBBAGConwCAQwERkZG\
        MTEUMBIGCisGAQQBgqJ8AgIMBDgwMDAwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASA3fEbIo8+MfY7z1eY2hRiOuu96C7zeO6tv7GP4avOMdCO\
        1LIGBLbMxtm1+rZOfeEMt0vgF8nsFRYFbXDyzQsio2YwZDASBgNVHRMBAf8ECDAGAQH/AgEAMA4GA1UdDwEB/wQEAwIBBjAdBgNVHQ4EFgQUr0K3\
        CU3r1RXsbs8zuBEVIl8yUogwHwYDVR0jBBgwFoAUav0idx9RH+y/FkGXZxDc3DGhcX4wCgYIKoZIzj0EAwIDSAAwRQIhAJbJyM8uAYhgBdj1vHLA\
        e3X9mldpWsSRETETi+oDPOUDAiAlVJQ75X1T1sR199I+v8/CA2zSm6Y5PsfvrYcUq3GCGQ==
        """)

    /// The test PAI's private key (`Chip-Test-PAI-FFF1-8000-Key`). Public: development only.
    public static let paiPrivateKeyPEM = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIEZ7LYpps1z+a9sPw2qBp9jj5F0GLffNuCJY88hAHcMYoAoGCCqGSM49
        AwEHoUQDQgAEgN3xGyKPPjH2O89XmNoUYjrrvegu83jurb+xj+GrzjHQjtSyBgS2
        zMbZtfq2Tn3hDLdL4BfJ7BUWBW1w8s0LIg==
        -----END EC PRIVATE KEY-----
        """

    /// "Matter Test CD Signing Authority", SKID 62:FA:82:33:…:71:60
    /// (`Chip-Test-CD-Signing-Cert`): development controllers accept CDs it signed.
    public static let cdSigningCertificate: [UInt8] = base64(
        """
        MIIBszCCAVqgAwIBAgIIRdrzneR6oI8wCgYIKoZIzj0EAwIwKzEpMCcGA1UEAwwgTWF0dGVyIFRlc3QgQ0QgU2lnbmluZyBBdXRob3JpdHkwIBcN\
        MjEwNjI4MTQyMzQzWhgPOTk5OTEyMzEyMzU5NTlaMCsxKTAnBgNVBAMMIE1hdHRlciBUZXN0IENEIFNpZ25pbmcgQXV0aG9yaXR5MFkwEwYHKoZI\
        zj0CAQYIKoZIzj0DAQcDQgAEPDmJIkUrVcrzicJb0bykZWlSzLkOiGkkmthHRlMBTL+V1oeWXgNrUhxRA35rjO3vyh60QEZpT6CIgu7WUZ3suqNm\
        MGQwEgYDVR0TAQH/BAgwBgEB/wIBATAOBgNVHQ8BAf8EBAMCAQYwHQYDVR0OBBYEFGL6gjNZrPqplj4c+hQK3fUE83FgMB8GA1UdIwQYMBaAFGL6\
        gjNZrPqplj4c+hQK3fUE83FgMAoGCCqGSM49BAMCA0cAMEQCICxUXOTkV9im8NnZu+vW7OHd/n+MbZps83UyH8b6xxOEAiBUB3jodDlyUn7t669Y\
        aGIgtUB48s1OYqdq58u5L/VMiw==
        """)

    /// The test CD signing key (`Chip-Test-CD-Signing-Key`). Public: development only.
    public static let cdSigningPrivateKeyPEM = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIK7zSEEW6UgexXvgRy30G/SZBk5QJK2GnspeiJgC1IB1oAoGCCqGSM49
        AwEHoUQDQgAEPDmJIkUrVcrzicJb0bykZWlSzLkOiGkkmthHRlMBTL+V1oeWXgNr
        UhxRA35rjO3vyh60QEZpT6CIgu7WUZ3sug==
        -----END EC PRIVATE KEY-----
        """

    /// The test PAI's signing key.
    public static func paiPrivateKey() throws(MatterSecurityError) -> P256.Signing.PrivateKey {
        do { return try P256.Signing.PrivateKey(pemRepresentation: paiPrivateKeyPEM) } catch {
            throw .crypto("the test PAI key does not parse: \(error)")
        }
    }

    /// The test CD signing key.
    public static func cdSigningPrivateKey() throws(MatterSecurityError) -> P256.Signing.PrivateKey {
        do { return try P256.Signing.PrivateKey(pemRepresentation: cdSigningPrivateKeyPEM) } catch {
            throw .crypto("the test CD signing key does not parse: \(error)")
        }
    }

    /// Attestation material for one installation: a fresh DAC key, a DAC for it signed by the
    /// test PAI, and a CD for (0xFFF1, 0x8000) signed with the test CD key.
    ///
    /// - Parameters:
    ///   - deviceTypeID: the primary device type the CD names (0x000E Aggregator for a bridge).
    ///   - serialNumber: the DAC's serial number (positive, at most 20 bytes).
    ///   - notBefore: the DAC's start of validity (the DAC never expires: 9999-12-31). Not before
    ///     the test PAA's and PAI's own notBefore (2021-06-28 14:23:43 UTC): verifiers check the
    ///     chain at the DAC's notBefore, and CHIP's refuses a DAC issued before its PAI.
    public static func installationCredentials(
        deviceTypeID: UInt32 = 0x000E, serialNumber: [UInt8] = Array(UUID().uuidString.utf8.prefix(8)),
        notBefore: Date = Date(timeIntervalSince1970: 1_625_097_600)  // 2021-07-01
    ) throws(MatterSecurityError) -> DeviceAttestationCredentials {
        let dacKey = P256.Signing.PrivateKey()
        let dac = try DeviceAttestationCertificate.issue(
            commonName: "Hearth Development DAC", vendorID: vendorID, productID: productID, publicKey: dacKey.publicKey,
            serialNumber: serialNumber, notBefore: notBefore, notAfter: nil,
            issuerCertificate: paiCertificate, issuerKey: try paiPrivateKey())
        let declaration = CertificationDeclaration(
            vendorID: vendorID, productIDs: [productID], deviceTypeID: deviceTypeID,
            certificateID: "DEV0000HEARTH000000", securityLevel: 0, securityInformation: 0, versionNumber: 1,
            certificationType: .developmentAndTest)
        let cms = try declaration.signed(with: try cdSigningPrivateKey(), certificate: cdSigningCertificate)
        return DeviceAttestationCredentials(
            dacKey: dacKey, dacCertificate: dac, paiCertificate: paiCertificate, certificationDeclaration: cms)
    }

    static func base64(_ text: String) -> [UInt8] {
        guard let data = Data(base64Encoded: text) else { preconditionFailure("embedded base64 does not decode") }
        return Array(data)
    }
}

/// What a device presents during attestation: its DAC key (private), the DAC and PAI (X.509
/// DER) and its signed Certification Declaration (CMS DER).
public struct DeviceAttestationCredentials: Sendable {
    // Kept as raw bytes: swift-crypto's private keys are not Sendable.
    private let dacKeyBytes: [UInt8]
    /// The DAC's private key (keep it secret: it is this installation's identity).
    public var dacKey: P256.Signing.PrivateKey {
        guard let key = try? P256.Signing.PrivateKey(rawRepresentation: dacKeyBytes) else {
            preconditionFailure("bytes of a valid P-256 key no longer load")
        }
        return key
    }
    public let dacCertificate: [UInt8]
    public let paiCertificate: [UInt8]
    public let certificationDeclaration: [UInt8]

    public init(dacKey: P256.Signing.PrivateKey, dacCertificate: [UInt8], paiCertificate: [UInt8], certificationDeclaration: [UInt8]) {
        dacKeyBytes = Array(dacKey.rawRepresentation)
        self.dacCertificate = dacCertificate
        self.paiCertificate = paiCertificate
        self.certificationDeclaration = certificationDeclaration
    }

    /// Answers an AttestationRequest (Core Specification 11.18.6.1): the attestation elements
    /// with the controller's nonce, and their signature with the DAC key over the elements and
    /// the session's attestation challenge.
    public func attest(nonce: [UInt8], attestationChallenge: [UInt8], timestamp: UInt32 = 0)
        throws(MatterSecurityError) -> (elements: [UInt8], signature: [UInt8])
    {
        let elements = try AttestationElements(
            certificationDeclaration: certificationDeclaration, attestationNonce: nonce, timestamp: timestamp
        ).encoded()
        let signature = try AttestationElements.sign(elements, attestationChallenge: attestationChallenge, with: dacKey)
        return (elements, signature)
    }
}
