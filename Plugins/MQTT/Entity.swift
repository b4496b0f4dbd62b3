import DriverAPI
import HomeModel

/// One MQTT message as the plugin's mappings read it: the payload, its text and, parsed once on
/// first use, its JSON.
final class Message {
    let topic: String
    let payload: [UInt8]
    let retained: Bool

    init(topic: String, payload: [UInt8], retained: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.retained = retained
    }

    convenience init(topic: String, text: String, retained: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), retained: retained)
    }

    private(set) lazy var text: String = String(decoding: payload, as: UTF8.self)

    /// Whether the payload is valid UTF-8 (a payload that is not is refused, never repaired).
    private(set) lazy var isValidUTF8: Bool =
        !payload.contains(where: { $0 >= 0x80 }) || String(validating: payload, as: UTF8.self) != nil

    private(set) lazy var json: Result<Value, JSONParser.Failure> = payload.withUnsafeBytes { bytes in
        Result { () throws(JSONParser.Failure) -> Value in try JSONParser.parse(bytes) }
    }

    var variables: Template.Variables { Template.Variables(message: self) }
}

/// Why a payload was refused: it did not parse, or its value is out of range.
struct PayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// What a payload means for the home.
enum Update: Hashable, Sendable {
    case attribute(TraitID, AttributeID, Value)
    case event(TraitID, EventID, [String: Value])
    /// The entity's own availability payload (for an availability template that maps state).
    case available(Bool)
}

/// An MQTT publication a command produces.
struct Outgoing: Hashable, Sendable {
    let topic: String
    let payload: String
    var qos: Int32 = 1
    var retain: Bool = false
}

/// What a command or a write does: messages to publish and, for an optimistic entity, the
/// state to assume.
struct Action: Sendable {
    var publish: [Outgoing]
    var assumed: [Update] = []
}

/// How an entity reads one topic.
struct StateSubscription: Sendable {
    let topic: String
    /// Turns a message into updates; throws ``PayloadError`` for a payload that does not parse
    /// or is out of range. Returns no updates for a payload that is not for this entity (a
    /// trigger's other button).
    let read: @Sendable (Message) throws(PayloadError) -> [Update]
}

/// An availability topic of an entity.
struct AvailabilityTopic: Hashable, Sendable {
    let topic: String
    var available: String = "online"
    var notAvailable: String = "offline"
    var template: Template?
}

enum AvailabilityMode: String, Sendable, Decodable {
    case all, any, latest
}

/// Current values the plugin last saw for a device, for commands that depend on them (toggle,
/// raise/lower a setpoint).
struct CurrentValues: Sendable {
    let values: [TraitID: [AttributeID: Value]]
    subscript(_ trait: TraitID, _ attribute: AttributeID) -> Value? { values[trait]?[attribute] }
}

/// A command or write handler of an entity.
typealias CommandHandler = @Sendable (_ arguments: [String: Value], _ current: CurrentValues) throws -> Action

struct CommandKey: Hashable, Sendable {
    let trait: TraitID
    let command: CommandID
}

struct WriteKey: Hashable, Sendable {
    let trait: TraitID
    let attribute: AttributeID
}

/// One Home Assistant entity (or one explicit mapping), compiled: which device and device type
/// it contributes to, the traits it brings, and how it reads and writes MQTT.
struct Entity: Sendable {
    /// The entity's key in the plugin: `<component>/[<node_id>/]<object_id>` for discovery,
    /// `config/<id>` for explicit mappings.
    var key: String
    /// The device it belongs to (the first of `device.identifiers`, else the unique ID).
    var deviceID: String
    var deviceName: String
    /// The entity's own name (`Channel 1`), used when it becomes a device of its own.
    var entityName: String?
    var manufacturer: String?
    var model: String?
    /// What the discovery message's `device` block says about the device (vendor, model,
    /// versions, serial number, identifiers): the host's `BasicInformation`.
    var identity: DeviceIdentity?
    /// The `device` block's `suggested_area`: the room commissioning pre-selects.
    var suggestedArea: String?
    /// The device type it brings; nil for an entity that only adds traits to the device's
    /// primary type (a battery level).
    var deviceType: DeviceTypeID?
    /// Lower ranks are preferred as the device's primary type.
    var rank: Int
    /// Entities of the same device and type merge into one device type (triggers of a remote).
    var mergesWithSameType = false
    /// The quantity a merging entity reports (`power`, `pm25`): two entities of one device that
    /// measure the same quantity do not merge (the second channel of a two-channel meter).
    var measures: String?
    /// The traits and their initial attribute values.
    var traits: [TraitID: [AttributeID: Value]]
    var subscriptions: [StateSubscription] = []
    var commands: [CommandKey: CommandHandler] = [:]
    var writes: [WriteKey: CommandHandler] = [:]
    var availability: [AvailabilityTopic] = []
    var availabilityMode: AvailabilityMode = .latest
    var optimistic = false
    var qos: Int32 = 1
    var commission: CommissionHint?
    /// A trigger's switch position (for the number of positions of a merged Generic Switch).
    var switchPosition: Int?
    /// Problems found while compiling (an unsupported template): logged once, at discovery.
    var problems: [String] = []

    init(
        key: String, deviceID: String, deviceName: String, deviceType: DeviceTypeID?, rank: Int,
        traits: [TraitID: [AttributeID: Value]]
    ) {
        self.key = key
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.deviceType = deviceType
        self.rank = rank
        self.traits = traits
    }

    /// Every topic the entity listens to.
    var topics: Set<String> { Set(subscriptions.map(\.topic) + availability.map(\.topic)) }
}
