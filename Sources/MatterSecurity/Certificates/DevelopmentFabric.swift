import Crypto

/// A self-made fabric for tests, benchmarks and fuzzing: a fresh root (RCAC) → ICAC, and NOCs
/// for the nodes asked for, all with new keys. Nothing outside this process trusts it.
public enum DevelopmentFabric {
    /// Credentials for each node ID, on one fabric (fabric index 1).
    ///
    /// - Parameters:
    ///   - fabricID: the fabric ID in every subject.
    ///   - epochIPK: the IPK epoch key both sides use.
    public static func credentials(
        nodeIDs: [UInt64], fabricID: UInt64 = 7, epochIPK: [UInt8] = [UInt8](repeating: 1, count: 16)
    ) throws(MatterSecurityError) -> [FabricCredentials] {
        let rootKey = P256.Signing.PrivateKey(), icacKey = P256.Signing.PrivateKey()
        let rootSKID = MatterCertificate.keyIdentifier(Array(rootKey.publicKey.x963Representation))
        let icacSKID = MatterCertificate.keyIdentifier(Array(icacKey.publicKey.x963Representation))
        let rootName = MatterDistinguishedName([.matterRCACID(1), .matterFabricID(fabricID)])
        let icacName = MatterDistinguishedName([.matterICACID(2), .matterFabricID(fabricID)])
        let root = try MatterCertificate.issue(
            serialNumber: [1], issuer: rootName, subject: rootName, subjectKey: rootKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: true, pathLength: nil), .keyUsage([.keyCertSign, .crlSign]),
                         .subjectKeyIdentifier(rootSKID), .authorityKeyIdentifier(rootSKID)], issuerKey: rootKey)
        let icac = try MatterCertificate.issue(
            serialNumber: [2], issuer: rootName, subject: icacName, subjectKey: icacKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: true, pathLength: 0), .keyUsage([.keyCertSign, .crlSign]),
                         .subjectKeyIdentifier(icacSKID), .authorityKeyIdentifier(rootSKID)], issuerKey: rootKey)
        var out: [FabricCredentials] = []
        for id in nodeIDs {
            let key = P256.Signing.PrivateKey()
            let noc = try MatterCertificate.issue(
                serialNumber: [UInt8(id & 0x7F) | 1], issuer: icacName,
                subject: MatterDistinguishedName([.matterNodeID(id), .matterFabricID(fabricID)]),
                subjectKey: key.publicKey, notBefore: 1, notAfter: 0,
                extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]),
                             .extendedKeyUsage([.clientAuth, .serverAuth]),
                             .subjectKeyIdentifier(MatterCertificate.keyIdentifier(Array(key.publicKey.x963Representation))),
                             .authorityKeyIdentifier(icacSKID)], issuerKey: icacKey)
            out.append(try FabricCredentials(fabricIndex: 1, root: root, icac: icac, noc: noc, operationalKey: key, epochIPK: epochIPK))
        }
        return out
    }
}
