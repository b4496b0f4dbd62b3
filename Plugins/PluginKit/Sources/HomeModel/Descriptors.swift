/// The data type of an attribute, command field or event field, after the Matter
/// specification's base types (Matter Core spec §7.19 "Data Types").
public enum DataType: String, Hashable, Sendable, Codable {
    case bool
    case uint8, uint16, uint24, uint32, uint64
    case int8, int16, int32, int64
    case enum8, enum16
    case bitmap8, bitmap16, bitmap32, bitmap64
    case single, double
    case string, octets
    case list, structure

    /// The range the base type itself allows (before any spec constraint).
    public var naturalRange: ClosedRange<Int64>? {
        switch self {
        case .uint8, .enum8, .bitmap8: 0...0xFF
        case .uint16, .enum16, .bitmap16: 0...0xFFFF
        case .uint24: 0...0xFF_FFFF
        case .uint32, .bitmap32: 0...0xFFFF_FFFF
        case .uint64, .bitmap64: 0...Int64.max
        case .int8: -128...127
        case .int16: -32768...32767
        case .int32: Int64(Int32.min)...Int64(Int32.max)
        case .int64: Int64.min...Int64.max
        default: nil
        }
    }

    public var isInteger: Bool { naturalRange != nil }
}

/// Whether an element must, may or must not be present (Matter Core spec §7.3 "Conformance").
public enum Conformance: String, Hashable, Sendable, Codable {
    case mandatory, optional, provisional, deprecated, conditional
}

/// A named value of an enumeration or a bit of a bitmap.
public struct EnumItem: Hashable, Sendable, Codable {
    public let name: String
    public let value: Int64
    public init(name: String, value: Int64) {
        self.name = name
        self.value = value
    }
}

/// Description of one attribute of a trait.
public struct AttributeDescriptor: Hashable, Sendable, Codable {
    public let id: AttributeID
    /// The specification's name, e.g. `MeasuredValue`.
    public let name: String
    /// The Swift property name on typed attribute views, e.g. `measuredValue`.
    public let swiftName: String
    public let type: DataType
    /// The element type of a `list`.
    public let elementType: DataType?
    /// The specification's type name (`temperature`, `OccupancyBitmap`, `percent100ths`…).
    public let specType: String
    public let minimum: Int64?
    public let maximum: Int64?
    public let nullable: Bool
    public let writable: Bool
    /// The unit, e.g. `0.01 °C`; nil where the attribute has none.
    public let unit: String?
    public let conformance: Conformance
    /// The conformance expression as the spec writes it (`M`, `O`, `LT`, `[HS]`…).
    public let conformanceExpression: String
    /// Values of an enumeration or bits of a bitmap.
    public let items: [EnumItem]

    public init(
        id: AttributeID, name: String, swiftName: String, type: DataType, elementType: DataType? = nil,
        specType: String, minimum: Int64? = nil, maximum: Int64? = nil, nullable: Bool = false,
        writable: Bool = false, unit: String? = nil, conformance: Conformance,
        conformanceExpression: String, items: [EnumItem] = []
    ) {
        self.id = id
        self.name = name
        self.swiftName = swiftName
        self.type = type
        self.elementType = elementType
        self.specType = specType
        self.minimum = minimum
        self.maximum = maximum
        self.nullable = nullable
        self.writable = writable
        self.unit = unit
        self.conformance = conformance
        self.conformanceExpression = conformanceExpression
        self.items = items
    }

    /// The range a value must fall in: the spec's constraint where given, else the base type's.
    public var allowedRange: ClosedRange<Int64>? {
        guard let natural = type.naturalRange else { return nil }
        let lo = max(minimum ?? natural.lowerBound, natural.lowerBound)
        let hi = min(maximum ?? natural.upperBound, natural.upperBound)
        return lo <= hi ? lo...hi : natural
    }
}

/// Description of a field of a command or an event.
public struct FieldDescriptor: Hashable, Sendable, Codable {
    public let name: String
    public let swiftName: String
    public let type: DataType
    public let specType: String
    public let minimum: Int64?
    public let maximum: Int64?
    public let nullable: Bool
    public let optional: Bool
    public let items: [EnumItem]

    public init(
        name: String, swiftName: String, type: DataType, specType: String, minimum: Int64? = nil,
        maximum: Int64? = nil, nullable: Bool = false, optional: Bool = false, items: [EnumItem] = []
    ) {
        self.name = name
        self.swiftName = swiftName
        self.type = type
        self.specType = specType
        self.minimum = minimum
        self.maximum = maximum
        self.nullable = nullable
        self.optional = optional
        self.items = items
    }

    public var allowedRange: ClosedRange<Int64>? {
        guard let natural = type.naturalRange else { return nil }
        let lo = max(minimum ?? natural.lowerBound, natural.lowerBound)
        let hi = min(maximum ?? natural.upperBound, natural.upperBound)
        return lo <= hi ? lo...hi : natural
    }
}

/// Description of a command a trait accepts.
public struct CommandDescriptor: Hashable, Sendable, Codable {
    public let id: CommandID
    public let name: String
    /// The Swift method name on typed traits, e.g. `toggle`, `moveToLevel`.
    public let swiftName: String
    public let fields: [FieldDescriptor]
    public let conformance: Conformance
    public let conformanceExpression: String

    public init(
        id: CommandID, name: String, swiftName: String, fields: [FieldDescriptor],
        conformance: Conformance, conformanceExpression: String
    ) {
        self.id = id
        self.name = name
        self.swiftName = swiftName
        self.fields = fields
        self.conformance = conformance
        self.conformanceExpression = conformanceExpression
    }
}

/// Description of an event a trait emits.
public struct EventDescriptor: Hashable, Sendable, Codable {
    public let id: EventID
    public let name: String
    public let swiftName: String
    /// `debug`, `info` or `critical`.
    public let priority: String
    public let fields: [FieldDescriptor]
    public let conformance: Conformance
    public let conformanceExpression: String

    public init(
        id: EventID, name: String, swiftName: String, priority: String, fields: [FieldDescriptor],
        conformance: Conformance, conformanceExpression: String
    ) {
        self.id = id
        self.name = name
        self.swiftName = swiftName
        self.priority = priority
        self.fields = fields
        self.conformance = conformance
        self.conformanceExpression = conformanceExpression
    }
}

/// A feature bit of a trait (its `FeatureMap`).
public struct FeatureDescriptor: Hashable, Sendable, Codable {
    public let bit: Int
    public let code: String
    public let name: String
    public init(bit: Int, code: String, name: String) {
        self.bit = bit
        self.code = code
        self.name = name
    }
}

/// Description of a trait (Matter cluster).
public struct TraitDescriptor: Hashable, Sendable, Codable {
    public let id: TraitID
    /// The specification's name, e.g. `On/Off`.
    public let name: String
    /// The Swift type name of the typed view, e.g. `OnOffTrait`.
    public let swiftName: String
    public let revision: Int
    public let features: [FeatureDescriptor]
    public let attributes: [AttributeDescriptor]
    public let commands: [CommandDescriptor]
    public let events: [EventDescriptor]
    /// Whether the trait is defined by a vendor rather than the Matter specification.
    public let isVendor: Bool
    /// The vendor's namespace (`ExampleOrganization`), for a trait a plugin declares; nil for
    /// the standard traits. An app reaches the trait as
    /// `deviceType.traits[ExampleOrganization.SpinnerTrait.self]`.
    public let namespace: String?

    public init(
        id: TraitID, name: String, swiftName: String, revision: Int, features: [FeatureDescriptor],
        attributes: [AttributeDescriptor], commands: [CommandDescriptor], events: [EventDescriptor],
        isVendor: Bool = false, namespace: String? = nil
    ) {
        self.id = id
        self.name = name
        self.swiftName = swiftName
        self.revision = revision
        self.features = features
        self.attributes = attributes
        self.commands = commands
        self.events = events
        self.isVendor = isVendor
        self.namespace = namespace
    }

    public func attribute(_ id: AttributeID) -> AttributeDescriptor? { attributes.first { $0.id == id } }
    public func attribute(named name: String) -> AttributeDescriptor? {
        attributes.first { $0.name == name || $0.swiftName == name }
    }
    public func command(_ id: CommandID) -> CommandDescriptor? { commands.first { $0.id == id } }
    public func command(named name: String) -> CommandDescriptor? {
        commands.first { $0.name == name || $0.swiftName == name }
    }
    public func event(_ id: EventID) -> EventDescriptor? { events.first { $0.id == id } }
    public func event(named name: String) -> EventDescriptor? {
        events.first { $0.name == name || $0.swiftName == name }
    }
}

/// Description of a device type (Matter Device Library).
public struct DeviceTypeDescriptor: Hashable, Sendable, Codable {
    public let id: DeviceTypeID
    /// The specification's name, e.g. `On/Off Light`.
    public let name: String
    /// The Swift type name of the typed view, e.g. `OnOffLightDeviceType`.
    public let swiftName: String
    public let revision: Int
    /// `simple`, `utility` or `node`.
    public let deviceClass: String
    public let requiredTraits: [TraitID]
    public let optionalTraits: [TraitID]
    /// Whether devices of this type are sensitive (locks, garage doors, alarms): scoped
    /// app grants see them only when the grant includes sensitive devices.
    public let isSensitive: Bool

    public init(
        id: DeviceTypeID, name: String, swiftName: String, revision: Int, deviceClass: String,
        requiredTraits: [TraitID], optionalTraits: [TraitID], isSensitive: Bool = false
    ) {
        self.id = id
        self.name = name
        self.swiftName = swiftName
        self.revision = revision
        self.deviceClass = deviceClass
        self.requiredTraits = requiredTraits
        self.optionalTraits = optionalTraits
        self.isSensitive = isSensitive
    }
}
