public import HomeModel

/// Severity of a plugin's log line.
public enum LogLevel: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    case trace, debug, info, notice, warning, error, critical

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// The door from a plugin into the home: everything a plugin tells the core goes through here.
///
/// Every method is synchronous and cheap: it never waits for observers, so it can be called
/// from a C library's callback thread. The host gives each plugin its own context.
public protocol DriverContext: Sendable {
    /// The plugin's ID (the `plugin` half of its devices' IDs).
    var pluginID: String { get }

    /// The plugin's section of `hearth.yaml`.
    var configuration: PluginConfiguration { get }

    /// Announces a device, or replaces its description (types, traits, initial values).
    ///
    /// New devices arrive *discovered*: they wait for a person to commission them, unless the
    /// description carries a ``DeviceDescription/commission`` hint from the configuration.
    func publish(_ device: DeviceDescription)

    /// Says the device is gone (an MQTT discovery message with an empty payload). The home keeps
    /// a commissioned device, offline, until an admin removes it.
    func remove(device localID: String)

    /// Reports attribute values. An identical repeated value refreshes "last seen" only.
    func report(_ reports: [AttributeReport])

    /// Reports an event (a button press). Events are never coalesced.
    func emit(_ event: EventReport)

    /// Sets the connectivity of one device, or of every device of the plugin (`device: nil`).
    func setConnectivity(_ state: ConnectivityState, device localID: String?)

    /// Sets the connectivity of one trait of a device (of one of its device types, or of every
    /// type that has the trait when `deviceType` is nil): an MQTT device with one dead entity
    /// makes that trait `offline` and the device type `partiallyOnline`, as the seed's
    /// `sourceConnectivity` describes. A later report of the trait brings it back online.
    ///
    /// The default, for a host that cannot tell traits apart, sets the whole device.
    func setConnectivity(_ state: ConnectivityState, device localID: String, trait: TraitID, deviceType: DeviceTypeID?)

    /// Writes a log line attributed to the plugin (and the device, when given).
    func log(_ level: LogLevel, _ message: String, device localID: String?)

    /// Adds to one of the plugin's own counters, which the host serves as the Prometheus
    /// metric `hearth_<plugin>_<name>_total` (a reconnect, a malformed payload, a GPIO edge).
    ///
    /// `name` is a short snake_case word such as `reconnects`; other characters become `_`.
    /// Cheap enough for every event; never blocks.
    func count(_ name: String, by amount: Int)

    /// Says how the plugin is doing (``PluginHealth``): call it when that changes, for example
    /// when the broker connection is lost or comes back. The host shows the last report in
    /// `GET /plugins` and `/readyz` (an `unhealthy` plugin makes the daemon not ready) and
    /// forgets it when the plugin's run ends. Cheap; never blocks. The default ignores it.
    func reportHealth(_ health: PluginHealth)
}

extension DriverContext {
    /// Reports one attribute value.
    public func report(
        _ localID: String, _ trait: TraitID, _ attribute: AttributeID, _ value: Value, deviceType: DeviceTypeID? = nil
    ) {
        report([AttributeReport(localID: localID, deviceType: deviceType, trait: trait, attribute: attribute, value: value)])
    }

    public func log(_ level: LogLevel, _ message: String) { log(level, message, device: nil) }

    public func reportHealth(_ health: PluginHealth) {}

    public func setConnectivity(_ state: ConnectivityState, device localID: String, trait: TraitID, deviceType: DeviceTypeID?) {
        setConnectivity(state, device: localID)
    }

    /// Sets the connectivity of one trait, on every device type of the device that has it.
    public func setConnectivity(_ state: ConnectivityState, device localID: String, trait: TraitID) {
        setConnectivity(state, device: localID, trait: trait, deviceType: nil)
    }

    /// Adds one to the plugin's counter `name`.
    public func count(_ name: String) { count(name, by: 1) }
}

/// One attribute value a plugin reports.
public struct AttributeReport: Hashable, Sendable, Codable {
    public let localID: String
    /// The device type the trait belongs to; nil means every type of the device that has it.
    public let deviceType: DeviceTypeID?
    public let trait: TraitID
    public let attribute: AttributeID
    public let value: Value

    public init(localID: String, deviceType: DeviceTypeID? = nil, trait: TraitID, attribute: AttributeID, value: Value) {
        self.localID = localID
        self.deviceType = deviceType
        self.trait = trait
        self.attribute = attribute
        self.value = value
    }
}

/// One event a plugin emits.
public struct EventReport: Hashable, Sendable, Codable {
    public let localID: String
    public let deviceType: DeviceTypeID?
    public let trait: TraitID
    public let event: EventID
    public let fields: [String: Value]
    /// When the hardware saw it, in nanoseconds since the Unix epoch; nil = now.
    public let timestampNanoseconds: UInt64?

    public init(
        localID: String, deviceType: DeviceTypeID? = nil, trait: TraitID, event: EventID, fields: [String: Value] = [:],
        timestampNanoseconds: UInt64? = nil
    ) {
        self.localID = localID
        self.deviceType = deviceType
        self.trait = trait
        self.event = event
        self.fields = fields
        self.timestampNanoseconds = timestampNanoseconds
    }
}

/// How a plugin describes a device.
public struct DeviceDescription: Hashable, Sendable, Codable {
    /// The plugin's own, stable identifier (a GPIO line's config key, an MQTT unique_id).
    public let localID: String
    /// The name the device suggests for itself (the person chooses the final one).
    public var name: String
    public var manufacturer: String?
    public var model: String?
    /// Device types; exactly one should be primary (the first is used when none is).
    public var types: [DeviceTypeDescription]
    /// Where the data comes from.
    public var locality: DataSourceLocality
    /// Commission on first sight with this name and room (from the configuration).
    public var commission: CommissionHint?
    /// Whether the plugin accepts commands as done without a confirming report.
    public var optimistic: Bool
    /// Who made the device and which one it is: the host shows it as the primary type's
    /// `BasicInformation` trait. Nil: vendor and product names come from `manufacturer` and
    /// `model`.
    public var identity: DeviceIdentity?
    /// The room the device suggests for itself (MQTT discovery's `suggested_area`): the
    /// commissioning page pre-selects it.
    public var suggestedRoom: String?

    public init(
        localID: String, name: String, manufacturer: String? = nil, model: String? = nil,
        types: [DeviceTypeDescription], locality: DataSourceLocality = .local, commission: CommissionHint? = nil,
        optimistic: Bool = false, identity: DeviceIdentity? = nil, suggestedRoom: String? = nil
    ) {
        self.localID = localID
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.types = types
        self.locality = locality
        self.commission = commission
        self.optimistic = optimistic
        self.identity = identity
        self.suggestedRoom = suggestedRoom
    }
}

/// One device type of a described device.
public struct DeviceTypeDescription: Hashable, Sendable, Codable {
    public let id: DeviceTypeID
    public var isPrimary: Bool
    /// The traits, with their initial attribute values (nil where unknown yet).
    public var traits: [TraitID: [AttributeID: Value]]

    public init(id: DeviceTypeID, isPrimary: Bool = false, traits: [TraitID: [AttributeID: Value]]) {
        self.id = id
        self.isPrimary = isPrimary
        self.traits = traits
    }
}

/// Configuration that places a device in the home on first sight.
public struct CommissionHint: Hashable, Sendable, Codable {
    public var name: String
    public var room: String?
    public var structure: String?

    public init(name: String, room: String? = nil, structure: String? = nil) {
        self.name = name
        self.room = room
        self.structure = structure
    }
}
