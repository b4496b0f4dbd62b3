/// The catalogue of device types and traits a home understands.
///
/// ``Catalog/standard`` holds the Matter device types and clusters generated from
/// `Plugins/PluginKit/catalog/matter.json` (see `scripts/generate-catalog`). Vendor traits are
/// added with ``Catalog/adding(traits:deviceTypes:)``.
public struct Catalog: Sendable {
    public let traits: [TraitID: TraitDescriptor]
    public let deviceTypes: [DeviceTypeID: DeviceTypeDescriptor]
    /// Precomputed checks for the hot path (``check(_:_:_:)``).
    let rules: [TraitID: TraitRules]

    public init(traits: [TraitDescriptor], deviceTypes: [DeviceTypeDescriptor]) {
        self.traits = Dictionary(traits.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        self.deviceTypes = Dictionary(deviceTypes.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        self.rules = self.traits.mapValues(TraitRules.init)
    }

    /// The Matter device types and traits of the generated catalogue.
    public static let standard = Catalog(traits: generatedTraits, deviceTypes: generatedDeviceTypes)

    /// This catalogue with vendor traits and device types added.
    public func adding(traits more: [TraitDescriptor], deviceTypes moreTypes: [DeviceTypeDescriptor] = []) -> Catalog {
        Catalog(traits: Array(traits.values) + more, deviceTypes: Array(deviceTypes.values) + moreTypes)
    }

    public func trait(_ id: TraitID) -> TraitDescriptor? { traits[id] }
    public func deviceType(_ id: DeviceTypeID) -> DeviceTypeDescriptor? { deviceTypes[id] }

    /// Finds a trait by spec name (`On/Off`), Swift name (`OnOffTrait`) or hex ID (`0x0006`).
    public func trait(named name: String) -> TraitDescriptor? {
        if let id = Self.parseID(name) { return traits[TraitID(id)] }
        let key = Self.normalise(name)
        return traits.values.first {
            Self.normalise($0.name) == key || Self.normalise($0.swiftName) == key
                || Self.normalise($0.swiftName) == key + "trait"
        }
    }

    /// Finds a device type by spec name (`On/Off Light`), Swift name or hex ID (`0x0100`).
    public func deviceType(named name: String) -> DeviceTypeDescriptor? {
        if let id = Self.parseID(name) { return deviceTypes[DeviceTypeID(id)] }
        let key = Self.normalise(name)
        return deviceTypes.values.first {
            Self.normalise($0.name) == key || Self.normalise($0.swiftName) == key
                || Self.normalise($0.swiftName) == key + "devicetype"
        }
    }

    /// Device types sorted by ID, traits sorted by ID: a stable order for listings.
    public var sortedDeviceTypes: [DeviceTypeDescriptor] { deviceTypes.values.sorted { $0.id < $1.id } }
    public var sortedTraits: [TraitDescriptor] { traits.values.sorted { $0.id < $1.id } }

    static func normalise(_ s: String) -> String {
        String(s.lowercased().filter { $0.isLetter || $0.isNumber })
    }

    static func parseID(_ s: String) -> UInt32? {
        let t = s.lowercased()
        guard t.hasPrefix("0x") else { return nil }
        return UInt32(t.dropFirst(2), radix: 16)
    }
}
