/// An Interaction Model status code (Matter Core Specification 8.10, "Status Codes").
///
/// A struct over the raw code so that codes unknown to this build still round-trip.
public struct InteractionStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = InteractionStatus(0x00)
    public static let failure = InteractionStatus(0x01)
    public static let invalidSubscription = InteractionStatus(0x7D)
    public static let unsupportedAccess = InteractionStatus(0x7E)
    public static let unsupportedEndpoint = InteractionStatus(0x7F)
    public static let invalidAction = InteractionStatus(0x80)
    public static let unsupportedCommand = InteractionStatus(0x81)
    public static let invalidCommand = InteractionStatus(0x85)
    public static let unsupportedAttribute = InteractionStatus(0x86)
    public static let constraintError = InteractionStatus(0x87)
    public static let unsupportedWrite = InteractionStatus(0x88)
    public static let resourceExhausted = InteractionStatus(0x89)
    public static let notFound = InteractionStatus(0x8B)
    public static let unreportableAttribute = InteractionStatus(0x8C)
    public static let invalidDataType = InteractionStatus(0x8D)
    public static let unsupportedRead = InteractionStatus(0x8F)
    public static let dataVersionMismatch = InteractionStatus(0x92)
    public static let timeout = InteractionStatus(0x94)
    public static let busy = InteractionStatus(0x9C)
    public static let accessRestricted = InteractionStatus(0x9D)
    public static let unsupportedCluster = InteractionStatus(0xC3)
    public static let noUpstreamSubscription = InteractionStatus(0xC5)
    public static let needsTimedInteraction = InteractionStatus(0xC6)
    public static let unsupportedEvent = InteractionStatus(0xC7)
    public static let pathsExhausted = InteractionStatus(0xC8)
    public static let timedRequestMismatch = InteractionStatus(0xC9)
    public static let failsafeRequired = InteractionStatus(0xCA)
    public static let invalidInState = InteractionStatus(0xCB)
    public static let noCommandResponse = InteractionStatus(0xCC)

    private static let names: [UInt8: String] = [
        0x00: "SUCCESS", 0x01: "FAILURE", 0x7D: "INVALID_SUBSCRIPTION", 0x7E: "UNSUPPORTED_ACCESS",
        0x7F: "UNSUPPORTED_ENDPOINT", 0x80: "INVALID_ACTION", 0x81: "UNSUPPORTED_COMMAND", 0x85: "INVALID_COMMAND",
        0x86: "UNSUPPORTED_ATTRIBUTE", 0x87: "CONSTRAINT_ERROR", 0x88: "UNSUPPORTED_WRITE", 0x89: "RESOURCE_EXHAUSTED",
        0x8B: "NOT_FOUND", 0x8C: "UNREPORTABLE_ATTRIBUTE", 0x8D: "INVALID_DATA_TYPE", 0x8F: "UNSUPPORTED_READ",
        0x92: "DATA_VERSION_MISMATCH", 0x94: "TIMEOUT", 0x9C: "BUSY", 0x9D: "ACCESS_RESTRICTED",
        0xC3: "UNSUPPORTED_CLUSTER", 0xC5: "NO_UPSTREAM_SUBSCRIPTION", 0xC6: "NEEDS_TIMED_INTERACTION",
        0xC7: "UNSUPPORTED_EVENT", 0xC8: "PATHS_EXHAUSTED", 0xC9: "TIMED_REQUEST_MISMATCH", 0xCA: "FAILSAFE_REQUIRED",
        0xCB: "INVALID_IN_STATE", 0xCC: "NO_COMMAND_RESPONSE",
    ]

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return "\(Self.names[rawValue] ?? "STATUS") (0x\(hex.count < 2 ? "0" + hex : hex))"
    }
}
