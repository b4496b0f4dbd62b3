public import HomeModel

/// The layout and device registry as it changed in one step, for a store to persist.
public struct LayoutDelta: Sendable {
    /// The full set of structures, when any changed.
    public var structures: [StructureSnapshot]?
    /// The full set of rooms, when any changed.
    public var rooms: [RoomSnapshot]?
    /// Devices added or whose registry entry (name, place, types, connectivity) changed.
    public var upserted: [DeviceSnapshot]
    public var removed: [DeviceID]
    /// The core's version after the step.
    public var version: UInt64
    /// The On/Off value of output devices (those with an On/Off trait) the step touched, so a
    /// store can keep the last state for "restore on start". Sensors never appear here.
    public var outputStates: [DeviceID: Bool]
    /// When the step happened (core clock, nanoseconds since the Unix epoch): the devices in
    /// ``upserted`` and ``outputStates`` were seen then.
    public var at: UInt64
    /// The step came from a driver (a device published, removed, or its connectivity changed),
    /// not from a person's layout edit: what it upserts or removes in the registry the plugin
    /// announces again at every start, so a store may commit it without waiting for the disk
    /// (a power cut loses at most the newest such rows, which the next start brings back).
    /// Output states and structure/room changes in it are kept as durably as any layout edit.
    public var fromDriver: Bool = false

    public init(
        structures: [StructureSnapshot]? = nil, rooms: [RoomSnapshot]? = nil, upserted: [DeviceSnapshot] = [],
        removed: [DeviceID] = [], version: UInt64, outputStates: [DeviceID: Bool] = [:], at: UInt64 = 0
    ) {
        self.structures = structures
        self.rooms = rooms
        self.upserted = upserted
        self.removed = removed
        self.version = version
        self.outputStates = outputStates
        self.at = at
    }

    public var isEmpty: Bool {
        structures == nil && rooms == nil && upserted.isEmpty && removed.isEmpty && outputStates.isEmpty
    }
}

/// What the core needs from storage: the layout and registry at start-up, and each change.
///
/// HomeStorage implements it on SQLite. A layout edit is persisted before it becomes visible;
/// if `persist` throws, the edit is refused and nothing changes.
public protocol LayoutStore: Sendable {
    func loadLayout() throws -> (structures: [StructureSnapshot], rooms: [RoomSnapshot], devices: [DeviceSnapshot])
    func persist(_ delta: LayoutDelta) throws
}
