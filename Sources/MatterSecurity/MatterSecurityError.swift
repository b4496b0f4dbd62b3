/// An error from MatterSecurity: onboarding payloads, SPAKE2+, PASE, certificates, CASE.
///
/// A struct over a private code so it can grow; `message` says what was wrong in words a person
/// can act on.
public struct MatterSecurityError: Error, Hashable, CustomStringConvertible, Sendable {
    enum Code: Hashable, Sendable {
        case invalidPasscode
        case invalidDiscriminator
        case invalidPayload
        case checksum
        case crypto
        case protocolViolation
        case verificationFailed
        case certificate
    }

    let code: Code
    /// What went wrong, for logs and people.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The setup passcode is out of range or trivial.
    public static let invalidPasscode = MatterSecurityError(.invalidPasscode, "invalid setup passcode")
    /// A manual code, QR payload or message did not parse.
    public static let invalidPayload = MatterSecurityError(.invalidPayload, "invalid payload")
    /// A check digit, MAC or confirmation value did not match.
    public static let verificationFailed = MatterSecurityError(.verificationFailed, "verification failed")

    /// True when both errors have the same kind, whatever their messages.
    public func isSameKind(as other: MatterSecurityError) -> Bool { code == other.code }

    static func invalidPasscode(_ message: String) -> MatterSecurityError { .init(.invalidPasscode, message) }
    static func invalidDiscriminator(_ message: String) -> MatterSecurityError { .init(.invalidDiscriminator, message) }
    static func invalidPayload(_ message: String) -> MatterSecurityError { .init(.invalidPayload, message) }
    static func checksum(_ message: String) -> MatterSecurityError { .init(.checksum, message) }
    static func crypto(_ message: String) -> MatterSecurityError { .init(.crypto, message) }
    static func protocolViolation(_ message: String) -> MatterSecurityError { .init(.protocolViolation, message) }
    static func verificationFailed(_ message: String) -> MatterSecurityError { .init(.verificationFailed, message) }
    static func certificate(_ message: String) -> MatterSecurityError { .init(.certificate, message) }
}
