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
            strictOperationValidation: strictOperationValidation, automationTypes: automationTypes.flatMap { $0.isEmpty ? nil : $0.wire })
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
        var w = WireAppRequest(
            id: id, appName: appName, requestedDeviceTypes: requestedDeviceTypes, status: status.wire, scope: scope?.wire,
            decidedBy: decidedBy, createdAt: createdAt, secret: secret, token: token?.token, tokenID: token?.id)
        w.requestedAutomationTypes = requestedAutomationTypes?.wire
        return w
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

extension Collection<AutomationType> {
    /// Sorted by device type, then trait.
    var wire: [WireAutomationType] {
        map { WireAutomationType(deviceType: $0.deviceType, trait: $0.trait) }.sorted { ($0.deviceType, $0.trait) < ($1.deviceType, $1.trait) }
    }
}

extension Catalog {
    /// `{deviceType, trait}` by name or ID → the pair; the trait must be one the device type has.
    func resolveAutomationType(_ ref: WireAutomationTypeRef) throws(HomeError) -> AutomationType {
        let type = try resolveDeviceType(ref.deviceType)
        let trait = try resolveTrait(ref.trait)
        if let d = deviceType(type), !(d.requiredTraits + d.optionalTraits).isEmpty, !(d.requiredTraits + d.optionalTraits).contains(trait) {
            throw .invalidArgument("\(d.name) has no trait \(self.trait(trait)?.name ?? trait.hex) to automate")
        }
        return AutomationType(deviceType: type, trait: trait)
    }
}
