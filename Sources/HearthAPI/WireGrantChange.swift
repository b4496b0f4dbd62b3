public import Foundation
public import HomeModel

// Permission changes (Google Home APIs `presentPermissionsUpdate`): an app with a grant asks
// for another scope (`POST /apps/permissions`), waits for the decision
// (`GET /apps/permissions/{id}?waitSeconds=30`); admins list (`GET /grants/changes`), approve
// (`POST /grants/changes/{id}/approve`, the body of ``ApproveRequest``) or deny them.

/// `POST /apps/permissions`: the device types the app wants now (absent or empty: all).
public struct PermissionsUpdateRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case deviceTypes }
    public let deviceTypes: [IDRef]?
    public init(deviceTypes: [IDRef]?) { self.deviceTypes = deviceTypes }
}

/// Where a permission change is (HomeCore's `GrantChange.Status`).
public enum WireGrantChangeStatus: String, WireEnum {
    /// Waiting for an admin.
    case pending
    /// Approved: the grant has the change's `scope` now.
    case approved
    case denied
    /// The app asked again before an admin decided.
    case superseded
    /// The grant was revoked before an admin decided.
    case cancelled
    public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
}

/// A permission change, linked to the grant it changes.
public struct WireGrantChange: Codable, Sendable, Hashable {
    public let id: String
    public let grantID: String
    public let appName: String
    /// Empty: every device type.
    public let requestedDeviceTypes: [DeviceTypeID]
    public let status: WireGrantChangeStatus
    /// The grant's scope as approved (only when approved).
    public let scope: WireScope?
    public let decidedBy: String?
    public let createdAt: Date
    public init(
        id: String, grantID: String, appName: String, requestedDeviceTypes: [DeviceTypeID], status: WireGrantChangeStatus, scope: WireScope?,
        decidedBy: String?, createdAt: Date
    ) {
        self.id = id
        self.grantID = grantID
        self.appName = appName
        self.requestedDeviceTypes = requestedDeviceTypes
        self.status = status
        self.scope = scope
        self.decidedBy = decidedBy
        self.createdAt = createdAt
    }
}
