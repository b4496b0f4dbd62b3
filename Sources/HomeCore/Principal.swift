public import HomeModel

/// Who is asking: a user (admin or member) or an app with a scoped grant.
public struct Principal: Hashable, Sendable, Codable, CustomStringConvertible {
    /// An admin changes the layout, commissions, manages users and grants; a member reads,
    /// observes and controls; an app sees and controls what its grant allows.
    public enum Role: String, Hashable, Sendable, Codable, CaseIterable {
        case admin, member, app
    }

    /// `user:alice`, `app:dashboard`, `system`.
    public let id: String
    public let role: Role
    /// What an app may see; nil for users.
    public let scope: GrantScope?
    /// The session or token this principal acts through; revoking it ends its subscriptions.
    public let sessionID: String?

    public init(id: String, role: Role, scope: GrantScope? = nil, sessionID: String? = nil) {
        self.id = id
        self.role = role
        self.scope = scope
        self.sessionID = sessionID
    }

    /// The daemon itself (config rules, start-up).
    public static let system = Principal(id: "system", role: .admin)

    public var description: String { id }
    public var canEditLayout: Bool { role == .admin }
}

/// What an app grant covers: which device types, which sensitive devices (locks, garage
/// doors, alarms) if any, and how strictly its operations are checked.
public struct GrantScope: Hashable, Sendable, Codable {
    /// Device types the app may see; nil means all.
    public var deviceTypes: Set<DeviceTypeID>?
    /// Every sensitive device is visible.
    public var includeSensitive: Bool
    /// Whether the app may send commands (else read and observe only).
    public var canControl: Bool
    /// Sensitive devices the admin chose one by one at consent (visible even without
    /// ``includeSensitive``); nil or empty: none.
    public var sensitiveDevices: Set<DeviceID>?
    /// The app's `strictOperationValidation`, chosen when it connects; nil: the daemon's setting.
    public var strictOperationValidation: Bool?
    /// The (device type, trait) pairs the app may use in automations (the consent request's
    /// `referencedAutomationTypes`); nil or empty: it may not automate.
    public var automationTypes: Set<AutomationType>?

    /// Whether the app may create automations: it may control, and has automation types.
    public var canAutomate: Bool { canControl && !(automationTypes ?? []).isEmpty }

    public init(
        deviceTypes: Set<DeviceTypeID>?, includeSensitive: Bool, canControl: Bool = true, sensitiveDevices: Set<DeviceID>? = nil,
        strictOperationValidation: Bool? = nil, automationTypes: Set<AutomationType>? = nil
    ) {
        self.deviceTypes = deviceTypes
        self.includeSensitive = includeSensitive
        self.canControl = canControl
        self.sensitiveDevices = sensitiveDevices
        self.strictOperationValidation = strictOperationValidation
        self.automationTypes = automationTypes
    }

    /// The device as this scope sees it: only allowed types, or nil when nothing is allowed.
    public func view(of device: DeviceSnapshot, catalog: Catalog) -> DeviceSnapshot? {
        if !includeSensitive, sensitiveDevices?.contains(device.id) != true,
            device.types.contains(where: { catalog.deviceType($0.id)?.isSensitive == true })
        {
            return nil
        }
        guard let allowed = deviceTypes else { return device }
        var d = device
        d.types = device.types.filter { allowed.contains($0.id) }
        if d.types.isEmpty { return nil }
        if !d.types.contains(where: \.isPrimary) { d.types[0].isPrimary = true }
        return d
    }
}

/// A device type and one of its traits an app may automate (GHA's `referencedAutomationTypes`).
public struct AutomationType: Hashable, Sendable, Codable {
    public var deviceType: DeviceTypeID
    public var trait: TraitID
    public init(deviceType: DeviceTypeID, trait: TraitID) {
        self.deviceType = deviceType
        self.trait = trait
    }
}
