/// Stable identifier of a device: the plugin's ID and the plugin's own identifier for it.
///
/// Never derived from the device's name, so renaming or moving a device keeps its ID.
/// The raw form is `plugin:local` (for example `gpio:front-door`).
public struct DeviceID: Hashable, Sendable, Comparable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The ID of the device a plugin calls `local`.
    public init(plugin: String, local: String) { self.rawValue = "\(plugin):\(local)" }

    /// The plugin part of the ID (everything before the first `:`).
    public var pluginID: String {
        guard let colon = rawValue.firstIndex(of: ":") else { return rawValue }
        return String(rawValue[..<colon])
    }

    /// The plugin's own identifier (everything after the first `:`).
    public var localID: String {
        guard let colon = rawValue.firstIndex(of: ":") else { return "" }
        return String(rawValue[rawValue.index(after: colon)...])
    }

    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// Identifier of a structure (a home).
public struct StructureID: Hashable, Sendable, Comparable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// Identifier of a room inside a structure.
public struct RoomID: Hashable, Sendable, Comparable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// A numeric Matter identifier (device type, cluster, attribute, command or event ID).
public protocol MatterIdentifier: RawRepresentable, Hashable, Sendable, Comparable, Codable,
    CustomStringConvertible, ExpressibleByIntegerLiteral where RawValue == UInt32
{
    init(_ rawValue: UInt32)
}

extension MatterIdentifier {
    public init(rawValue: UInt32) { self.init(rawValue) }
    public init(integerLiteral value: UInt32) { self.init(value) }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    /// Hexadecimal, as the specification writes it: `0x0006`.
    public var hex: String {
        let digits = String(rawValue, radix: 16, uppercase: true)
        let width = rawValue > 0xFFFF ? 8 : 4
        return "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
    public var description: String { hex }
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(UInt32.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// A Matter device type ID (Matter Device Library, e.g. On/Off Light is `0x0100`).
public struct DeviceTypeID: MatterIdentifier {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
}

/// A trait (Matter cluster) ID, e.g. On/Off is `0x0006`. Vendor traits use the
/// manufacturer-specific range (`0xFFF1_FC00` and up).
public struct TraitID: MatterIdentifier {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
}

/// An attribute ID inside a trait.
public struct AttributeID: MatterIdentifier {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
}

/// A command ID inside a trait.
public struct CommandID: MatterIdentifier {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
}

/// An event ID inside a trait.
public struct EventID: MatterIdentifier {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
}
