/// `PUT /exposure` (and what `GET /exposure` reports as `policy`): which devices leave the house
/// through every door. Rooms by name or ID, device types by name or hex ID (`0x0100`), devices by
/// ID. A missing list is empty; `includeSensitive` defaults to false, `allowControl` to true.
public struct WireExposurePolicy: WireRequest, Equatable {
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case rooms, deviceTypes, devices, excludedRooms, excludedDeviceTypes, excludedDevices, includeSensitive, allowControl
    }
    public var rooms: [String]?
    public var deviceTypes: [String]?
    public var devices: [String]?
    public var excludedRooms: [String]?
    public var excludedDeviceTypes: [String]?
    public var excludedDevices: [String]?
    public var includeSensitive: Bool?
    public var allowControl: Bool?

    public init(
        rooms: [String]? = nil, deviceTypes: [String]? = nil, devices: [String]? = nil, excludedRooms: [String]? = nil,
        excludedDeviceTypes: [String]? = nil, excludedDevices: [String]? = nil, includeSensitive: Bool? = nil, allowControl: Bool? = nil
    ) {
        self.rooms = rooms
        self.deviceTypes = deviceTypes
        self.devices = devices
        self.excludedRooms = excludedRooms
        self.excludedDeviceTypes = excludedDeviceTypes
        self.excludedDevices = excludedDevices
        self.includeSensitive = includeSensitive
        self.allowControl = allowControl
    }
}

/// Where the policy in force comes from.
public enum WireExposureSource: String, Codable, Sendable, Equatable {
    /// hearth.yaml's `exposure.devices` (or the default: every non-sensitive device).
    case configuration
    /// An admin's edit (`PUT /exposure`), until `DELETE /exposure`.
    case admin
}

/// Why a device does or does not leave the house.
public enum WireExposureVerdict: String, Codable, Sendable, Equatable {
    case exposed, notCommissioned, excludedDevice, excludedRoom, notSelected, sensitive, noTypeLeft
}

/// One commissioned device and the verdict on it.
public struct WireExposedDevice: Codable, Sendable, Equatable {
    public let id: String
    public let name: String
    public let verdict: WireExposureVerdict
    public init(id: String, name: String, verdict: WireExposureVerdict) {
        self.id = id
        self.name = name
        self.verdict = verdict
    }
}

/// `GET /exposure`: the policy (rooms and types as IDs), where it comes from, the doors that
/// are on, and the verdict on every commissioned device.
public struct WireExposure: Codable, Sendable, Equatable {
    public let policy: WireExposurePolicy
    public let source: WireExposureSource
    public let doors: [String]
    public let devices: [WireExposedDevice]
    public init(policy: WireExposurePolicy, source: WireExposureSource, doors: [String], devices: [WireExposedDevice]) {
        self.policy = policy
        self.source = source
        self.doors = doors
        self.devices = devices
    }
}
