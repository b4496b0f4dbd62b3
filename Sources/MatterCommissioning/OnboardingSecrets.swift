/// What a Matter node generates once per installation and must keep (Core Specification 5.1.1):
/// the setup passcode and discriminator of its onboarding payload, the PBKDF parameters of its
/// PASE verifier, and its device attestation identity (DAC key, DAC, CD).
///
/// Never printed whole: `description` leaves out the keys and the passcode.
public struct OnboardingSecrets: Hashable, Sendable, CustomStringConvertible {
    public var passcode: UInt32
    /// 12 bits.
    public var discriminator: UInt16
    /// PBKDF salt (16…32 bytes) and iterations (1000…100000) of the PASE verifier.
    public var salt: [UInt8]
    public var iterations: Int
    /// The raw P-256 DAC private key, the DAC (X.509 DER) and the signed CD (CMS DER).
    public var dacKey: [UInt8]
    public var dacCertificate: [UInt8]
    public var certificationDeclaration: [UInt8]

    public init(passcode: UInt32, discriminator: UInt16, salt: [UInt8], iterations: Int, dacKey: [UInt8], dacCertificate: [UInt8],
                certificationDeclaration: [UInt8]) {
        self.passcode = passcode
        self.discriminator = discriminator
        self.salt = salt
        self.iterations = iterations
        self.dacKey = dacKey
        self.dacCertificate = dacCertificate
        self.certificationDeclaration = certificationDeclaration
    }

    public var description: String { "onboarding secrets (discriminator \(discriminator), \(iterations) iterations)" }
}

/// Where the onboarding secrets are kept (HomeStorage's `MatterStateStore`).
public protocol OnboardingStore: Sendable {
    /// nil on a new installation.
    func loadOnboarding() throws(MatterStoreError) -> OnboardingSecrets?
    func saveOnboarding(_ secrets: OnboardingSecrets) throws(MatterStoreError)
}
