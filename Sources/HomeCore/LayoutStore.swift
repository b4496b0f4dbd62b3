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

    public var isEmpty: Bool { structures == nil && rooms == nil && upserted.isEmpty && removed.isEmpty }
}

/// What the core needs from storage: the layout and registry at start-up, and each change.
///
/// HomeStorage implements it on SQLite. A layout edit is persisted before it becomes visible;
/// if `persist` throws, the edit is refused and nothing changes.
public protocol LayoutStore: Sendable {
    func loadLayout() throws -> (structures: [StructureSnapshot], rooms: [RoomSnapshot], devices: [DeviceSnapshot])
    func persist(_ delta: LayoutDelta) throws
}
