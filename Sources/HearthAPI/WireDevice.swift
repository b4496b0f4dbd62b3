public import HomeModel

/// An attribute as the API shows it: ID, spec name, value in the spec's units, unit.
public struct WireAttribute: Hashable, Sendable, Codable {
    public let id: AttributeID
    public let name: String?
    public internal(set) var value: Value
    public let unit: String?
}

/// A trait of a device type, with its attributes and connectivity metadata.
public struct WireTrait: Hashable, Sendable, Codable {
    public let id: TraitID
    public let name: String?
    public let sourceConnectivity: SourceConnectivity
    public internal(set) var attributes: [WireAttribute]
}

/// A device type a device exposes.
public struct WireDeviceType: Hashable, Sendable, Codable {
    public let id: DeviceTypeID
    public let name: String?
    public let isPrimaryType: Bool
    public let sourceConnectivity: SourceConnectivity
    public internal(set) var traits: [WireTrait]
}

/// A device on the wire: identity, layout, metadata (primary type, connectivity, locality)
/// and every device type with its traits and attribute values.
public struct WireDevice: Hashable, Sendable, Codable {
    public let id: DeviceID
    public let name: String
    public let structureID: StructureID?
    public let roomID: RoomID?
    public let commissioning: CommissioningState
    public let manufacturer: String?
    public let model: String?
    /// The room a discovered device suggests (MQTT discovery's `suggested_area`).
    public let suggestedRoom: String?
    public let primaryType: DeviceTypeID?
    public let sourceConnectivity: SourceConnectivity
    public internal(set) var types: [WireDeviceType]

    /// The wire form of a snapshot, with names and units from the catalogue.
    public init(_ d: DeviceSnapshot, catalog: Catalog) {
        id = d.id
        name = d.name
        structureID = d.structureID
        roomID = d.roomID
        commissioning = d.commissioning
        manufacturer = d.manufacturer
        model = d.model
        suggestedRoom = d.suggestedRoom
        primaryType = d.primaryType?.id
        sourceConnectivity = d.sourceConnectivity
        types = d.types.map { t in
            WireDeviceType(
                id: t.id, name: catalog.deviceType(t.id)?.name, isPrimaryType: t.isPrimary,
                sourceConnectivity: t.sourceConnectivity,
                traits: t.traits.values.sorted { $0.id < $1.id }.map { trait in
                    let descriptor = catalog.trait(trait.id)
                    return WireTrait(
                        id: trait.id, name: descriptor?.name, sourceConnectivity: trait.sourceConnectivity,
                        attributes: trait.attributes.keys.sorted().map { a in
                            let ad = descriptor?.attribute(a)
                            return WireAttribute(id: a, name: ad?.swiftName, value: trait.attributes[a]!, unit: ad?.unit)
                        })
                })
        }
    }

    /// Back to the model's snapshot (what typed views read).
    public var snapshot: DeviceSnapshot {
        DeviceSnapshot(
            id: id, name: name, structureID: structureID, roomID: roomID, commissioning: commissioning,
            types: types.map { t in
                DeviceTypeState(
                    id: t.id, isPrimary: t.isPrimaryType,
                    traits: Dictionary(
                        t.traits.map { tr in
                            (
                                tr.id,
                                TraitState(
                                    id: tr.id, attributes: Dictionary(tr.attributes.map { ($0.id, $0.value) }, uniquingKeysWith: { a, _ in a }),
                                    sourceConnectivity: tr.sourceConnectivity)
                            )
                        }, uniquingKeysWith: { a, _ in a }))
            },
            manufacturer: manufacturer, model: model, suggestedRoom: suggestedRoom)
    }
}

/// An event on the wire.
public struct WireEvent: Hashable, Sendable, Codable {
    public let device: DeviceID
    public let deviceType: DeviceTypeID
    public let trait: TraitID
    public let event: EventID
    /// The event's spec name (`InitialPress`), when the catalogue knows it.
    public let name: String?
    public let fields: [String: Value]
    public let timestampNanoseconds: UInt64
    public let version: UInt64

    public init(_ e: DeviceEvent, catalog: Catalog) {
        device = e.device
        deviceType = e.deviceType
        trait = e.trait
        event = e.event
        name = catalog.trait(e.trait)?.event(e.event)?.name
        fields = e.fields
        timestampNanoseconds = e.timestampNanoseconds
        version = e.version
    }

    public var model: DeviceEvent {
        DeviceEvent(
            device: device, deviceType: deviceType, trait: trait, event: event, fields: fields,
            timestampNanoseconds: timestampNanoseconds, version: version)
    }
}
