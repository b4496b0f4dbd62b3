public import HomeModel

/// Which devices leave the house: the one setting every door (MQTT export, the Matter bridge,
/// the HAP bridge) reads.
///
/// By default every commissioned, non-sensitive device is exposed. An admin narrows the set by
/// room, device type or device ID, excludes some, and opts in sensitive devices (locks, garage
/// doors, alarms) either all at once (``includeSensitive``) or one by one (listing their ID in
/// ``devices``). The rules, in order:
///
/// 1. Only commissioned devices are exposed.
/// 2. A device in ``excludedDevices`` or in a room of ``excludedRooms`` is never exposed.
/// 3. When ``rooms``, ``deviceTypes`` and ``devices`` are all empty every device is selected;
///    otherwise a device is selected when its room, any of its types, or its ID is listed.
/// 4. Device types in ``excludedDeviceTypes`` are removed from what is exposed; a device left
///    with no type is not exposed.
/// 5. A sensitive device is exposed only when ``includeSensitive`` is on or its ID is listed in
///    ``devices``; its sensitive types are removed otherwise (so a lock that is also a contact
///    sensor is never half-exposed by accident: only when opted in).
///
/// ```swift
/// var policy = ExposurePolicy()                 // every non-sensitive device
/// policy.rooms = ["room-garage"]                // only the garage …
/// policy.devices = ["gpio:front-lock"]          // … and, opted in, the front door lock
/// let shown = policy.view(of: device, catalog: .standard)   // nil: stays home
/// ```
public struct ExposurePolicy: Hashable, Sendable, Codable {
    /// Rooms whose devices are selected (empty: no selection by room).
    public var rooms: Set<RoomID>
    /// Device types selected (empty: no selection by type).
    public var deviceTypes: Set<DeviceTypeID>
    /// Devices selected by ID; listing a sensitive device here opts it in.
    public var devices: Set<DeviceID>
    public var excludedRooms: Set<RoomID>
    public var excludedDeviceTypes: Set<DeviceTypeID>
    public var excludedDevices: Set<DeviceID>
    /// Exposes every selected sensitive device (locks, garage doors, alarms). Off by default.
    public var includeSensitive: Bool
    /// Whether controllers on the other side may send commands (else they read and observe).
    public var allowControl: Bool

    public init(
        rooms: Set<RoomID> = [], deviceTypes: Set<DeviceTypeID> = [], devices: Set<DeviceID> = [],
        excludedRooms: Set<RoomID> = [], excludedDeviceTypes: Set<DeviceTypeID> = [], excludedDevices: Set<DeviceID> = [],
        includeSensitive: Bool = false, allowControl: Bool = true
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

    /// Every commissioned non-sensitive device, controllable.
    public static let `default` = ExposurePolicy()

    /// Why a device is or is not exposed (shown by `hearth exposure check`).
    public enum Verdict: Hashable, Sendable {
        case exposed
        case notCommissioned
        case excludedDevice
        case excludedRoom
        case notSelected
        case sensitive
        case noTypeLeft
    }

    /// Whether the device leaves the house, and why.
    public func verdict(for device: DeviceSnapshot, catalog: Catalog) -> Verdict {
        guard device.commissioning == .commissioned else { return .notCommissioned }
        if excludedDevices.contains(device.id) { return .excludedDevice }
        if let room = device.roomID, excludedRooms.contains(room) { return .excludedRoom }
        let selectsAll = rooms.isEmpty && deviceTypes.isEmpty && devices.isEmpty
        if !selectsAll {
            let byRoom = device.roomID.map(rooms.contains) ?? false
            let byType = device.types.contains { deviceTypes.contains($0.id) }
            guard byRoom || byType || devices.contains(device.id) else { return .notSelected }
        }
        let sensitiveAllowed = includeSensitive || devices.contains(device.id)
        let kept = keptTypes(of: device, sensitiveAllowed: sensitiveAllowed, catalog: catalog)
        if kept.isEmpty {
            let anySensitive = device.types.contains { catalog.deviceType($0.id)?.isSensitive == true }
            return anySensitive && !sensitiveAllowed ? .sensitive : .noTypeLeft
        }
        return .exposed
    }

    /// The device as the other side sees it: only its exposed types (one of them primary), or
    /// nil when it stays home.
    public func view(of device: DeviceSnapshot, catalog: Catalog) -> DeviceSnapshot? {
        guard verdict(for: device, catalog: catalog) == .exposed else { return nil }
        let sensitiveAllowed = includeSensitive || devices.contains(device.id)
        var d = device
        d.types = keptTypes(of: device, sensitiveAllowed: sensitiveAllowed, catalog: catalog)
        if !d.types.contains(where: \.isPrimary) { d.types[0].isPrimary = true }
        return d
    }

    /// Whether the device (by ID, with the current state) is exposed.
    public func exposes(_ device: DeviceSnapshot, catalog: Catalog) -> Bool {
        verdict(for: device, catalog: catalog) == .exposed
    }

    func keptTypes(of device: DeviceSnapshot, sensitiveAllowed: Bool, catalog: Catalog) -> [DeviceTypeState] {
        device.types.filter { t in
            if excludedDeviceTypes.contains(t.id) { return false }
            if !sensitiveAllowed, catalog.deviceType(t.id)?.isSensitive == true { return false }
            return true
        }
    }

    /// The grant a door acts under: what the core itself enforces for commands and reads that
    /// come in through it (sensitive devices only when some are opted in; read-only unless
    /// ``allowControl``). The door also checks ``view(of:catalog:)`` per device, which adds the
    /// room and ID rules a grant cannot express.
    public var grantScope: GrantScope {
        GrantScope(deviceTypes: nil, includeSensitive: includeSensitive || !devices.isEmpty, canControl: allowControl)
    }

    /// The principal a door (`mqtt`, `matter`, `hap`) acts as on the core.
    public func principal(door: String) -> Principal {
        Principal(id: "exposure:\(door)", role: .app, scope: grantScope)
    }
}
