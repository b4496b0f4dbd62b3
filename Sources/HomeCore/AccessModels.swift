public import Foundation
public import HomeModel

/// A person who signs in: an admin or a member.
public struct User: Hashable, Sendable, Codable {
    public let username: String
    /// `admin` or `member`.
    public let role: Principal.Role
    public let createdAt: Date
    /// False for the first admin until the setup code is used.
    public let hasPassword: Bool

    public init(username: String, role: Principal.Role, createdAt: Date, hasPassword: Bool) {
        self.username = username
        self.role = role
        self.createdAt = createdAt
        self.hasPassword = hasPassword
    }

    /// The principal this user acts as through the session `sessionID`.
    public func principal(sessionID: String) -> Principal {
        Principal(id: "user:\(username)", role: role, sessionID: sessionID)
    }
}

/// A bearer token as handed out once: the secret itself is never stored, only its SHA-256.
public struct IssuedToken: Hashable, Sendable, Codable {
    /// The secret to send as `Authorization: Bearer <token>`.
    public let token: String
    /// The token's stable ID (also the core session ID of everything done with it).
    public let id: String
    public let principal: Principal

    public init(token: String, id: String, principal: Principal) {
        self.token = token
        self.id = id
        self.principal = principal
    }
}

/// What a valid token authenticates as.
public struct AuthSession: Hashable, Sendable {
    public let tokenID: String
    public let principal: Principal
    /// The user's name, or the app's name for an app grant.
    public let subject: String

    public init(tokenID: String, principal: Principal, subject: String) {
        self.tokenID = tokenID
        self.principal = principal
        self.subject = subject
    }
}

/// An app's request for access, waiting for an admin (the consent step).
public struct AppRequest: Hashable, Sendable, Codable {
    public enum Status: String, Hashable, Sendable, Codable {
        /// Waiting for an admin.
        case pending
        /// Approved; the app collects its token once.
        case approved
        case denied
        /// The token was collected (the grant is live until revoked).
        case issued
        /// The grant was revoked.
        case revoked
    }

    public let id: String
    public let appName: String
    /// The device types the app asked for (empty: it asked for everything).
    public let requestedDeviceTypes: [DeviceTypeID]
    public let status: Status
    /// What the admin approved; nil while pending or when denied.
    public let scope: GrantScope?
    public let decidedBy: String?
    public let createdAt: Date
    /// The (device type, trait) pairs the app asked to automate (its `referencedAutomationTypes`).
    public var requestedAutomationTypes: [AutomationType]?

    public init(
        id: String, appName: String, requestedDeviceTypes: [DeviceTypeID], status: Status, scope: GrantScope?,
        decidedBy: String?, createdAt: Date, requestedAutomationTypes: [AutomationType]? = nil
    ) {
        self.requestedAutomationTypes = requestedAutomationTypes
        self.id = id
        self.appName = appName
        self.requestedDeviceTypes = requestedDeviceTypes
        self.status = status
        self.scope = scope
        self.decidedBy = decidedBy
        self.createdAt = createdAt
    }
}

/// A live app grant: the token an approved request was given and what it covers.
public struct AppGrant: Hashable, Sendable, Codable {
    /// The grant's ID: the ID of its token.
    public let id: String
    public let requestID: String
    public let appName: String
    public let scope: GrantScope
    public let createdAt: Date
    public let revoked: Bool

    public init(id: String, requestID: String, appName: String, scope: GrantScope, createdAt: Date, revoked: Bool) {
        self.id = id
        self.requestID = requestID
        self.appName = appName
        self.scope = scope
        self.createdAt = createdAt
        self.revoked = revoked
    }
}

/// An app's request to change its live grant (Google Home APIs `presentPermissionsUpdate`),
/// waiting for an admin; linked to the grant it would change.
///
/// ```
/// pending ──approve──▶ approved   (the grant's scope changes in the same transaction)
///    ├──────deny─────▶ denied
///    ├── a newer request from the same grant ──▶ superseded
///    └── the grant is revoked ──▶ cancelled
/// ```
public struct GrantChange: Hashable, Sendable, Codable {
    public enum Status: String, Hashable, Sendable, Codable, CaseIterable {
        case pending, approved, denied
        /// The app asked again before an admin decided: the newer request counts.
        case superseded
        /// The grant was revoked before an admin decided.
        case cancelled
    }

    public let id: String
    /// The grant (token ID) the change is for.
    public let grantID: String
    public let appName: String
    /// The device types the app asks for now (empty: every device type).
    public let requestedDeviceTypes: [DeviceTypeID]
    public private(set) var status: Status
    /// The grant's scope as approved; nil unless approved.
    public let scope: GrantScope?
    public let decidedBy: String?
    public let createdAt: Date

    public init(
        id: String, grantID: String, appName: String, requestedDeviceTypes: [DeviceTypeID], status: Status, scope: GrantScope?,
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

    /// Moves a pending change on. - Throws: `conflict` when it was already decided.
    public mutating func decide(_ next: Status) throws(HomeError) {
        guard status == .pending else {
            throw .conflict("permission change \(id) was already decided (\(status.rawValue))")
        }
        guard next != .pending else { return }
        status = next
    }

    /// The scope a grant gets when an admin approves this change as asked: the requested
    /// device types (all when none), everything else as the grant has it now.
    public func askedScope(from current: GrantScope) -> GrantScope {
        var scope = current
        scope.deviceTypes = requestedDeviceTypes.isEmpty ? nil : Set(requestedDeviceTypes)
        return scope
    }
}
