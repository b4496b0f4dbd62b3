/// The live state of one trait on one device type of a device: attribute values in the
/// specification's units and where they come from.
public struct TraitState: Hashable, Sendable, Codable {
    public let id: TraitID
    public var attributes: [AttributeID: Value]
    public var sourceConnectivity: SourceConnectivity

    public init(id: TraitID, attributes: [AttributeID: Value] = [:], sourceConnectivity: SourceConnectivity = .unknown) {
        self.id = id
        self.attributes = attributes
        self.sourceConnectivity = sourceConnectivity
    }

    public subscript(attribute: AttributeID) -> Value? { attributes[attribute] }
}

/// One device type a device exposes, with its traits.
public struct DeviceTypeState: Hashable, Sendable, Codable {
    public let id: DeviceTypeID
    public var isPrimary: Bool
    public var traits: [TraitID: TraitState]

    public init(id: DeviceTypeID, isPrimary: Bool, traits: [TraitID: TraitState]) {
        self.id = id
        self.isPrimary = isPrimary
        self.traits = traits
    }

    /// The device type's connectivity, aggregated over its traits.
    public var sourceConnectivity: SourceConnectivity {
        SourceConnectivity.aggregate(traits.values.lazy.map(\.sourceConnectivity))
    }
}

/// Whether a device waits in the discovered list or belongs to the home.
public enum CommissioningState: String, Hashable, Sendable, Codable {
    /// Reported by a plugin, waiting for a person (or a config rule) to commission it.
    case discovered
    /// Named and placed in a structure (and possibly a room).
    case commissioned
}

/// A device as the core holds it: identity, layout, and the device types it exposes.
public struct DeviceSnapshot: Identifiable, Hashable, Sendable, Codable {
    public let id: DeviceID
    public var name: String
    public var structureID: StructureID?
    public var roomID: RoomID?
    public var commissioning: CommissioningState
    /// Device types in the order the plugin declared them; exactly one is primary.
    public var types: [DeviceTypeState]
    public var manufacturer: String?
    public var model: String?
    /// The room the device suggests for itself (MQTT discovery's `suggested_area`), for
    /// commissioning; not kept once the device is commissioned.
    public var suggestedRoom: String?

    public init(
        id: DeviceID, name: String, structureID: StructureID? = nil, roomID: RoomID? = nil,
        commissioning: CommissioningState = .discovered, types: [DeviceTypeState],
        manufacturer: String? = nil, model: String? = nil, suggestedRoom: String? = nil
    ) {
        self.id = id
        self.name = name
        self.structureID = structureID
        self.roomID = roomID
        self.commissioning = commissioning
        self.types = types
        self.manufacturer = manufacturer
        self.model = model
        self.suggestedRoom = suggestedRoom
    }

    public var pluginID: String { id.pluginID }

    /// The device type marked primary (the first one when none is marked).
    public var primaryType: DeviceTypeState? { types.first(where: \.isPrimary) ?? types.first }

    public func type(_ id: DeviceTypeID) -> DeviceTypeState? { types.first { $0.id == id } }

    /// The device's connectivity, aggregated over all its traits.
    public var sourceConnectivity: SourceConnectivity {
        SourceConnectivity.aggregate(types.lazy.flatMap { $0.traits.values.lazy.map(\.sourceConnectivity) })
    }
}

/// A structure (a home) with its name.
public struct StructureSnapshot: Identifiable, Hashable, Sendable, Codable {
    public let id: StructureID
    public var name: String
    public init(id: StructureID, name: String) {
        self.id = id
        self.name = name
    }
}

/// A room inside a structure.
public struct RoomSnapshot: Identifiable, Hashable, Sendable, Codable {
    public let id: RoomID
    public var structureID: StructureID
    public var name: String
    public init(id: RoomID, structureID: StructureID, name: String) {
        self.id = id
        self.structureID = structureID
        self.name = name
    }
}

/// An event a device emitted (a button's `InitialPress`, a lock's `DoorLockAlarm`…).
public struct DeviceEvent: Hashable, Sendable, Codable {
    public let device: DeviceID
    public let deviceType: DeviceTypeID
    public let trait: TraitID
    public let event: EventID
    public let fields: [String: Value]
    /// When the hardware saw it, in nanoseconds since the Unix epoch (the kernel's timestamp
    /// for GPIO edges, the arrival time for MQTT).
    public let timestampNanoseconds: UInt64
    /// The core's version when the event was accepted.
    public var version: UInt64

    public init(
        device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, event: EventID, fields: [String: Value] = [:],
        timestampNanoseconds: UInt64, version: UInt64 = 0
    ) {
        self.device = device
        self.deviceType = deviceType
        self.trait = trait
        self.event = event
        self.fields = fields
        self.timestampNanoseconds = timestampNanoseconds
        self.version = version
    }
}
