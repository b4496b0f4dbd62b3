/// A closed set of strings on the wire, decoded with a message that lists what is allowed.
public protocol WireEnum: RawRepresentable, CaseIterable, Codable, Sendable, Hashable where RawValue == String {}

extension WireEnum {
    /// Decodes one of the cases, or fails naming them all (`expected one of admin, member, app`).
    public static func decodeCase(from decoder: any Decoder) throws -> Self {
        let c = try decoder.singleValueContainer()
        let raw = try c.decode(String.self)
        guard let value = Self(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(
                in: c, debugDescription: "'\(raw)' is not one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }
}

/// Who a principal is on the wire: HomeCore's `Principal.Role`.
public enum WireRole: String, WireEnum {
    case admin, member, app
    public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
}

/// Where an app's access request is in the consent step (HomeCore's `ConsentWorkflow`).
public enum WireAppRequestStatus: String, WireEnum {
    /// Waiting for an admin.
    case pending
    /// Approved; the app collects its token once.
    case approved
    case denied
    /// The token was collected (the grant is live until revoked).
    case issued
    /// The grant was revoked.
    case revoked
    public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
}
