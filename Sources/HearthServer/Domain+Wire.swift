import Foundation
public import HearthAPI
public import HomeCore
import HomeModel

// The access domain (HomeCore) as the wire shows it (HearthAPI): every mapping in one place.

extension Principal.Role {
    /// The role on the wire.
    public var wire: WireRole {
        switch self {
        case .admin: .admin
        case .member: .member
        case .app: .app
        }
    }

    /// The role a wire value names.
    public init(_ wire: WireRole) {
        switch wire {
        case .admin: self = .admin
        case .member: self = .member
        case .app: self = .app
        }
    }
}

extension AppRequest.Status {
    public var wire: WireAppRequestStatus {
        switch self {
        case .pending: .pending
        case .approved: .approved
        case .denied: .denied
        case .issued: .issued
        case .revoked: .revoked
        }
    }
}

extension GrantScope {
    public var wire: WireScope {
        WireScope(
            deviceTypes: deviceTypes.map { $0.sorted() }, includeSensitive: includeSensitive, canControl: canControl,
            sensitiveDevices: sensitiveDevices.flatMap { $0.isEmpty ? nil : $0.sorted { $0.rawValue < $1.rawValue } },
            strictOperationValidation: strictOperationValidation)
    }
}

extension IssuedToken {
    /// The answer to a sign-in or setup: the secret, once.
    public var wire: TokenResponse {
        TokenResponse(token: token, tokenID: id, principal: principal.id, role: principal.role.wire)
    }
}

extension AuthSession {
    /// `GET /me`.
    public var wire: MeResponse {
        MeResponse(principal: principal.id, role: principal.role.wire, tokenID: tokenID, scope: principal.scope?.wire)
    }
}

extension User {
    public var wire: WireUser {
        WireUser(username: username, role: role.wire, hasPassword: hasPassword, createdAt: createdAt)
    }
}

extension AppRequest {
    /// The request on the wire; `secret` only in the answer to the request itself, `token`
    /// only once, to the app, after approval.
    public func wire(secret: String? = nil, token: IssuedToken? = nil) -> WireAppRequest {
        WireAppRequest(
            id: id, appName: appName, requestedDeviceTypes: requestedDeviceTypes, status: status.wire, scope: scope?.wire,
            decidedBy: decidedBy, createdAt: createdAt, secret: secret, token: token?.token, tokenID: token?.id)
    }
}

extension AppGrant {
    public var wire: WireGrant {
        WireGrant(id: id, requestID: requestID, appName: appName, scope: scope.wire, createdAt: createdAt)
    }
}

extension GrantChange {
    public var wire: WireGrantChange {
        WireGrantChange(
            id: id, grantID: grantID, appName: appName, requestedDeviceTypes: requestedDeviceTypes,
            status: WireGrantChangeStatus(rawValue: status.rawValue) ?? .cancelled, scope: scope?.wire, decidedBy: decidedBy,
            createdAt: createdAt)
    }
}
