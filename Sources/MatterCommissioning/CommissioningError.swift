/// An Interaction Model status code (Core Specification 8.10 "Status Codes"): what a command
/// handler answers when a command fails as a whole rather than with a cluster response.
public struct InteractionStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = InteractionStatus(rawValue: 0x00)
    public static let failure = InteractionStatus(rawValue: 0x01)
    public static let unsupportedAccess = InteractionStatus(rawValue: 0x7E)
    public static let invalidCommand = InteractionStatus(rawValue: 0x85)
    public static let constraintError = InteractionStatus(rawValue: 0x87)
    public static let resourceExhausted = InteractionStatus(rawValue: 0x89)
    public static let notFound = InteractionStatus(rawValue: 0x8B)
    public static let busy = InteractionStatus(rawValue: 0x9C)
    public static let failsafeRequired = InteractionStatus(rawValue: 0xCA)
    public static let invalidInState = InteractionStatus(rawValue: 0xCB)

    public var description: String { "0x" + String(rawValue, radix: 16, uppercase: true) }
}

/// A command refused with an IM status, optionally a cluster-specific status (8.10.1: a
/// FAILURE carrying a ClusterStatus), and words for the log.
///
/// A struct so it can grow; `status`/`clusterStatus` are what goes on the wire.
public struct CommissioningError: Error, Hashable, Sendable, CustomStringConvertible {
    public let status: InteractionStatus
    /// A cluster-specific status (for example AdministratorCommissioning's Busy = 2).
    public let clusterStatus: UInt8?
    public let message: String

    public init(_ status: InteractionStatus, clusterStatus: UInt8? = nil, _ message: String) {
        self.status = status
        self.clusterStatus = clusterStatus
        self.message = message
    }

    public var description: String {
        "\(message) (status \(status)\(clusterStatus.map { ", cluster status \($0)" } ?? ""))"
    }

    static func failsafeRequired(_ command: String) -> CommissioningError {
        CommissioningError(.failsafeRequired, "\(command) needs an armed fail-safe")
    }
}
