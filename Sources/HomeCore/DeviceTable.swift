public import HomeModel
public import HashTreeCollections
import Synchronization

/// Every device of a ``HomeState``, discovered and commissioned: a view over the two trees the
/// state keeps, ``commissioned`` and ``discovered``, each device in exactly one of them.
///
/// A report to a commissioned device walks one tree (it used to walk `devices` and then
/// `commissioned`, which held the same device twice); `devices()` hands out ``commissioned``
/// and the discovered list hands out ``discovered`` as they are, in O(1).
public struct DeviceTable: Sequence, Sendable, Equatable {
    public typealias Tree = TreeDictionary<DeviceID, DeviceSnapshot>
    public typealias Element = Tree.Element

    /// The commissioned devices: what `devices()` shows.
    public internal(set) var commissioned: Tree = [:]
    /// The devices waiting to be commissioned.
    public internal(set) var discovered: Tree = [:]

    public init() {}

    public subscript(id: DeviceID) -> DeviceSnapshot? { commissioned[id] ?? discovered[id] }

    public var count: Int { commissioned.count + discovered.count }
    public var isEmpty: Bool { commissioned.isEmpty && discovered.isEmpty }
    public func contains(_ id: DeviceID) -> Bool { commissioned[id] != nil || discovered[id] != nil }

    /// Every device's ID: the commissioned ones first.
    public var keys: FlattenSequence<[Tree.Keys]> { [commissioned.keys, discovered.keys].joined() }
    /// Every device: the commissioned ones first.
    public var values: FlattenSequence<[Tree.Values]> { [commissioned.values, discovered.values].joined() }

    public func makeIterator() -> FlattenSequence<[Tree]>.Iterator { [commissioned, discovered].joined().makeIterator() }
    public var underestimatedCount: Int { count }

    /// The devices `isIncluded` keeps, as one tree.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> Tree {
        try commissioned.filter(isIncluded).merging(discovered.filter(isIncluded)) { a, _ in a }
    }

    /// Puts a device in the tree its commissioning state says (and out of the other one).
    mutating func put(_ device: DeviceSnapshot) {
        if device.commissioning == .commissioned {
            commissioned[device.id] = device
            if !discovered.isEmpty { discovered[device.id] = nil }
        } else {
            discovered[device.id] = device
            if !commissioned.isEmpty { commissioned[device.id] = nil }
        }
    }

    mutating func drop(_ id: DeviceID) {
        commissioned[id] = nil
        discovered[id] = nil
    }
}

/// When each device last reported, as the core keeps it: one table that is not versioned with
/// the state (a report only moves the time, and nobody asks for the time at an older version),
/// so a report writes one hash table slot in place instead of walking a third persistent tree.
///
/// Written only by the state machine while the core's lock is held (a ``HomeState`` the core
/// owns carries a reference to it); read through ``HomeCore/lastSeen``.
final class LastSeenTable: @unchecked Sendable {
    /// Guarded by the core's lock (the `HomeState` that refers to this table is only mutated under it).
    var times: [DeviceID: UInt64] = [:]
    init() {}
}
