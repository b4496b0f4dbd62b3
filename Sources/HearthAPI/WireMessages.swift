public import Foundation
public import HomeModel

/// A device type, trait, attribute or command as a client names it: a number (`6`), a hex
/// string (`"0x0006"`) or a name (`"OnOff"`, `"On/Off"`, `"toggle"`).
public enum IDRef: Hashable, Sendable, Codable, CustomStringConvertible {
    case number(UInt32)
    case name(String)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(UInt32.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = Self.parse(s)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected a number, a hex string like \"0x0006\" or a name")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .number(let n): try c.encode(n)
        case .name(let s): try c.encode(s)
        }
    }

    /// `"0x0006"` and `"6"` are numbers; anything else is a name.
    public static func parse(_ s: String) -> IDRef {
        let t = s.lowercased()
        if t.hasPrefix("0x"), let n = UInt32(t.dropFirst(2), radix: 16) { return .number(n) }
        if let n = UInt32(t) { return .number(n) }
        return .name(s)
    }

    public var description: String {
        switch self {
        case .number(let n): "0x" + String(n, radix: 16, uppercase: true)
        case .name(let s): s
        }
    }

    public var number: UInt32? { if case .number(let n) = self { n } else { nil } }
}

/// The stable error body: `{"error": {"code": "permissionDenied", "message": "…"}}`.
public struct WireErrorBody: Codable, Sendable {
    public let error: WireError
    public init(error: WireError) { self.error = error }
    public init(error: HomeError) { self.error = WireError(error) }
}

// MARK: - Requests

/// A body the server checks key by key: unknown keys are refused, not ignored.
///
/// The allowed keys are the request's own `CodingKeys` (the ones Codable decodes), so the
/// list of fields is written once.
public protocol WireRequest: Codable, Sendable {
    associatedtype CodingKeys: CodingKey & CaseIterable
}

extension WireRequest {
    /// The keys a body of this request may contain.
    public static var keys: Set<String> { Set(CodingKeys.allCases.map(\.stringValue)) }
}

public struct SetupRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case code, password }
    public let code: String
    public let password: String
    public init(code: String, password: String) {
        self.code = code
        self.password = password
    }
}

public struct LoginRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case username, password }
    public let username: String
    public let password: String
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

public struct UserRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case username, password, role }
    public let username: String
    public let password: String
    public let role: WireRole
    public init(username: String, password: String, role: WireRole) {
        self.username = username
        self.password = password
        self.role = role
    }
}

/// `POST /auth/password`: a signed-in user changes their own password.
public struct PasswordChangeRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case current, new }
    public let current: String
    public let new: String
    public init(current: String, new: String) {
        self.current = current
        self.new = new
    }
}

/// `PUT /users/{name}/password`: an admin sets a user's password.
public struct PasswordResetRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case password }
    public let password: String
    public init(password: String) { self.password = password }
}

public struct NameRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case name }
    public let name: String
    public init(name: String) { self.name = name }
}

public struct RoomRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case name, structure }
    public let name: String
    public let structure: StructureID
    public init(name: String, structure: StructureID) {
        self.name = name
        self.structure = structure
    }
}

/// `PATCH /devices/{id}`: rename and/or move. `room: null` takes it out of its room.
public struct DevicePatchRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case name, room }
    public let name: String?
    /// Absent: leave the room alone; `.null`: no room; a string: that room.
    public let room: Value?
    public init(name: String? = nil, room: Value? = nil) {
        self.name = name
        self.room = room
    }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        if c.contains(.room) {
            room = try c.decode(Value.self, forKey: .room)
        } else {
            room = nil
        }
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(name, forKey: .name)
        if let room { try c.encode(room, forKey: .room) }
    }
}

public struct CommissionRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case name, structure, room, primaryType }
    public let name: String
    public let structure: StructureID
    public let room: RoomID?
    public let primaryType: IDRef?
    public init(name: String, structure: StructureID, room: RoomID? = nil, primaryType: IDRef? = nil) {
        self.name = name
        self.structure = structure
        self.room = room
        self.primaryType = primaryType
    }
}

/// `POST /commands`: `{device, type, trait, command, args}`.
public struct CommandWireRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case device, type, trait, command, args }
    public let device: DeviceID
    public let type: IDRef
    public let trait: IDRef
    public let command: IDRef
    public let args: [String: Value]?
    public init(device: DeviceID, type: IDRef, trait: IDRef, command: IDRef, args: [String: Value]? = nil) {
        self.device = device
        self.type = type
        self.trait = trait
        self.command = command
        self.args = args
    }
}

public struct CommandWireResponse: Codable, Sendable {
    public let result: Value
    public init(result: Value) { self.result = result }
}

/// `POST /attributes`: `{device, type, trait, attribute, value}`.
public struct WriteWireRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case device, type, trait, attribute, value }
    public let device: DeviceID
    public let type: IDRef
    public let trait: IDRef
    public let attribute: IDRef
    public let value: Value
    public init(device: DeviceID, type: IDRef, trait: IDRef, attribute: IDRef, value: Value) {
        self.device = device
        self.type = type
        self.trait = trait
        self.attribute = attribute
        self.value = value
    }
}

/// An app asks for access (the start of the consent step).
public struct AppAccessRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case name, deviceTypes, automationTypes }
    public let name: String
    public let deviceTypes: [IDRef]?
    /// The (device type, trait) pairs the app wants to use in automations (the Google Home
    /// APIs' `referencedAutomationTypes`); absent: it makes no automations.
    public let automationTypes: [WireAutomationTypeRef]?
    public init(name: String, deviceTypes: [IDRef]?, automationTypes: [WireAutomationTypeRef]? = nil) {
        self.name = name
        self.deviceTypes = deviceTypes
        self.automationTypes = automationTypes
    }
}

/// A device type and one of its traits, by name or ID (`{"deviceType": "OnOffLight", "trait": "OnOff"}`).
public struct WireAutomationTypeRef: Codable, Sendable, Hashable {
    public let deviceType: IDRef
    public let trait: IDRef
    public init(deviceType: IDRef, trait: IDRef) {
        self.deviceType = deviceType
        self.trait = trait
    }
}

/// A device type and one of its traits, by ID (`{"deviceType": 256, "trait": 6}`).
public struct WireAutomationType: Codable, Sendable, Hashable {
    public let deviceType: DeviceTypeID
    public let trait: TraitID
    public init(deviceType: DeviceTypeID, trait: TraitID) {
        self.deviceType = deviceType
        self.trait = trait
    }
}

/// An admin's decision on an app request: which device types, sensitive devices or not.
public struct ApproveRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case deviceTypes, includeSensitive, canControl, sensitiveDevices, automationTypes }
    /// nil: the types the app asked for (all, if it asked for none).
    public let deviceTypes: [IDRef]?
    public let includeSensitive: Bool?
    public let canControl: Bool?
    /// Sensitive devices (locks, garage doors, alarms) the admin lets the app see, one by one.
    public let sensitiveDevices: [DeviceID]?
    /// The (device type, trait) pairs the app may automate; nil: what it asked for (approve)
    /// or unchanged (a grant edit); empty: none.
    public let automationTypes: [WireAutomationTypeRef]?
    public init(
        deviceTypes: [IDRef]? = nil, includeSensitive: Bool? = nil, canControl: Bool? = nil, sensitiveDevices: [DeviceID]? = nil,
        automationTypes: [WireAutomationTypeRef]? = nil
    ) {
        self.deviceTypes = deviceTypes
        self.includeSensitive = includeSensitive
        self.canControl = canControl
        self.sensitiveDevices = sensitiveDevices
        self.automationTypes = automationTypes
    }
}

// MARK: - Responses

public struct TokenResponse: Codable, Sendable {
    public let token: String
    public let tokenID: String
    public let principal: String
    public let role: WireRole
    public init(token: String, tokenID: String, principal: String, role: WireRole) {
        self.token = token
        self.tokenID = tokenID
        self.principal = principal
        self.role = role
    }
}

public struct WireScope: Hashable, Codable, Sendable {
    /// nil: every device type.
    public let deviceTypes: [DeviceTypeID]?
    public let includeSensitive: Bool
    public let canControl: Bool
    /// Sensitive devices chosen one by one (absent: none).
    public let sensitiveDevices: [DeviceID]?
    /// The app's validation mode (absent: the daemon's setting).
    public let strictOperationValidation: Bool?
    /// The (device type, trait) pairs the app may automate (absent: none).
    public let automationTypes: [WireAutomationType]?
    public init(
        deviceTypes: [DeviceTypeID]?, includeSensitive: Bool, canControl: Bool, sensitiveDevices: [DeviceID]? = nil,
        strictOperationValidation: Bool? = nil, automationTypes: [WireAutomationType]? = nil
    ) {
        self.automationTypes = automationTypes
        self.deviceTypes = deviceTypes
        self.includeSensitive = includeSensitive
        self.canControl = canControl
        self.sensitiveDevices = sensitiveDevices
        self.strictOperationValidation = strictOperationValidation
    }
}

public struct MeResponse: Codable, Sendable {
    public let principal: String
    public let role: WireRole
    public let tokenID: String
    public let scope: WireScope?
    public init(principal: String, role: WireRole, tokenID: String, scope: WireScope?) {
        self.principal = principal
        self.role = role
        self.tokenID = tokenID
        self.scope = scope
    }
}

public struct WireUser: Codable, Sendable, Hashable {
    public let username: String
    public let role: WireRole
    public let hasPassword: Bool
    public let createdAt: Date
    public init(username: String, role: WireRole, hasPassword: Bool, createdAt: Date) {
        self.username = username
        self.role = role
        self.hasPassword = hasPassword
        self.createdAt = createdAt
    }
}

public struct WireAppRequest: Codable, Sendable, Hashable {
    public let id: String
    public let appName: String
    public let requestedDeviceTypes: [DeviceTypeID]
    /// The (device type, trait) pairs the app asks to automate (absent: none).
    public var requestedAutomationTypes: [WireAutomationType]?
    public let status: WireAppRequestStatus
    public let scope: WireScope?
    public let decidedBy: String?
    public let createdAt: Date
    /// Only in the answer to the request itself: what proves the app is the asker.
    public let secret: String?
    /// Only once, to the app, after approval.
    public let token: String?
    public let tokenID: String?
    public init(
        id: String, appName: String, requestedDeviceTypes: [DeviceTypeID], status: WireAppRequestStatus, scope: WireScope?, decidedBy: String?,
        createdAt: Date, secret: String? = nil, token: String? = nil, tokenID: String? = nil
    ) {
        self.id = id
        self.appName = appName
        self.requestedDeviceTypes = requestedDeviceTypes
        self.status = status
        self.scope = scope
        self.decidedBy = decidedBy
        self.createdAt = createdAt
        self.secret = secret
        self.token = token
        self.tokenID = tokenID
    }
}

public struct WireGrant: Codable, Sendable, Hashable {
    public let id: String
    public let requestID: String
    public let appName: String
    public let scope: WireScope
    public let createdAt: Date
    public init(id: String, requestID: String, appName: String, scope: WireScope, createdAt: Date) {
        self.id = id
        self.requestID = requestID
        self.appName = appName
        self.scope = scope
        self.createdAt = createdAt
    }
}

/// A plugin as `GET /plugins` and `/readyz` report it (hearthd maps the host's status to this).
public struct WirePlugin: Codable, Sendable, Hashable {
    /// Where a plugin is in its life.
    public enum State: String, Codable, Sendable, Hashable, CaseIterable {
        case starting, running, restarting
        /// Failed too many times in a row; not restarted until the daemon restarts.
        case parked
        case stopped
        /// Its section of `hearth.yaml` was refused; `lastError` says where and why.
        case invalidConfiguration
        /// The file was not loaded at all (not a plugin, wrong ABI or compiler, duplicate ID).
        case refused
        /// Switched off with `enabled: false`.
        case disabled
    }

    /// What a running plugin last said about its health (a broker connection, a bus).
    public struct Health: Codable, Sendable, Hashable {
        public enum State: String, Codable, Sendable, Hashable, CaseIterable {
            /// Everything it depends on answers.
            case healthy
            /// Working with less than it should; `/readyz` stays ready and says so.
            case degraded
            /// It cannot do its job; `/readyz` answers 503.
            case unhealthy
        }

        public let state: State
        /// In words a person can act on (`cannot reach the MQTT broker at 127.0.0.1:1883: …`).
        public let reason: String?
        public init(state: State, reason: String? = nil) {
            self.state = state
            self.reason = reason
        }
    }

    public let id: String
    public let name: String
    public let version: String
    public let path: String
    public var state: State
    public let restarts: Int
    public let lastError: String?
    /// Only while `running`, once the plugin has said something about its health.
    public var health: Health?
    public init(
        id: String, name: String, version: String, path: String, state: State, restarts: Int = 0, lastError: String? = nil,
        health: Health? = nil
    ) {
        self.id = id
        self.name = name
        self.version = version
        self.path = path
        self.state = state
        self.restarts = restarts
        self.lastError = lastError
        self.health = health
    }
}

/// `POST /apps/requests/{id}/claim`: the app collects its token, waiting up to `waitSeconds`.
public struct ClaimRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case secret, waitSeconds, strictOperationValidation }
    public let secret: String
    public let waitSeconds: Int?
    /// The app's choice (Google Home APIs `HomeClientConfiguration.strictOperationValidation`):
    /// true refuses an operation the catalogue says the device cannot take before it reaches a
    /// driver; false sends it and reports the driver's refusal as `driverError`. Absent: the
    /// daemon's `core.strictOperationValidation`.
    public let strictOperationValidation: Bool?
    public init(secret: String, waitSeconds: Int? = nil, strictOperationValidation: Bool? = nil) {
        self.secret = secret
        self.waitSeconds = waitSeconds
        self.strictOperationValidation = strictOperationValidation
    }
}

/// `POST /names/check`: is this name good for a device (in that room)?
public struct NameCheckRequest: WireRequest {
    public enum CodingKeys: String, CodingKey, CaseIterable { case name, room }
    public let name: String
    public let room: String?
    public init(name: String, room: String? = nil) {
        self.name = name
        self.room = room
    }
}

/// The verdict on a proposed name, with each broken rule in words.
public struct NameCheckResponse: Codable, Sendable, Hashable {
    public let name: String
    public let valid: Bool
    public let rules: [String]
    public let warning: String?
    public let suggestions: [String]
    public init(name: String, valid: Bool, rules: [String], warning: String?, suggestions: [String]) {
        self.name = name
        self.valid = valid
        self.rules = rules
        self.warning = warning
        self.suggestions = suggestions
    }
}

public struct WireCatalog: Codable, Sendable {
    public let deviceTypes: [DeviceTypeDescriptor]
    public let traits: [TraitDescriptor]
    public init(deviceTypes: [DeviceTypeDescriptor], traits: [TraitDescriptor]) {
        self.deviceTypes = deviceTypes
        self.traits = traits
    }
}

public struct CommissionResponse: Codable, Sendable {
    public let device: WireDevice
    /// A naming hint worth showing (a name that repeats its room).
    public let warning: String?
    public let suggestions: [String]
    public init(device: WireDevice, warning: String?, suggestions: [String]) {
        self.device = device
        self.warning = warning
        self.suggestions = suggestions
    }
}

/// `GET`/`PUT /me/favourites`: the signed-in user's pinned devices, in their order.
public struct WireFavourites: WireRequest, Hashable {
    public enum CodingKeys: String, CodingKey, CaseIterable { case devices }
    public let devices: [DeviceID]
    public init(devices: [DeviceID]) { self.devices = devices }
}
