public import HomeModel
import HashTreeCollections

extension ExposurePolicy {
    /// A policy from names as people write them (hearth.yaml, the CLI): rooms by name or ID,
    /// device types by spec name, Swift name or hex ID, devices by ID.
    ///
    /// - Returns: the policy and the names that match nothing (worth a warning: a room not
    ///   created yet, a typo). Unknown device IDs are kept (the device may appear later).
    public static func resolving(
        rooms: [String] = [], deviceTypes: [String] = [], devices: [String] = [],
        excludedRooms: [String] = [], excludedDeviceTypes: [String] = [], excludedDevices: [String] = [],
        includeSensitive: Bool = false, allowControl: Bool = true, state: HomeState, catalog: Catalog
    ) -> (policy: ExposurePolicy, unknown: [String]) {
        var unknown: [String] = []
        func room(_ name: String) -> RoomID? {
            if state.rooms[RoomID(rawValue: name)] != nil { return RoomID(rawValue: name) }
            let key = name.lowercased()
            if let r = state.rooms.values.first(where: { $0.name.lowercased() == key }) { return r.id }
            unknown.append("room '\(name)'")
            return nil
        }
        func type(_ name: String) -> DeviceTypeID? {
            if let t = catalog.deviceType(named: name) { return t.id }
            unknown.append("device type '\(name)'")
            return nil
        }
        let policy = ExposurePolicy(
            rooms: Set(rooms.compactMap(room)), deviceTypes: Set(deviceTypes.compactMap(type)),
            devices: Set(devices.map { DeviceID(rawValue: $0) }),
            excludedRooms: Set(excludedRooms.compactMap(room)), excludedDeviceTypes: Set(excludedDeviceTypes.compactMap(type)),
            excludedDevices: Set(excludedDevices.map { DeviceID(rawValue: $0) }),
            includeSensitive: includeSensitive, allowControl: allowControl)
        return (policy, unknown)
    }
}
