public import HomeModel
public import HashTreeCollections

/// Something a query returns: a device, a structure, a room.
public protocol HomeElement: Identifiable, Sendable where ID: Hashable & Sendable {
    associatedtype Snapshot: Hashable & Sendable
    static func make(_ snapshot: Snapshot, backend: (any HomeBackend)?) -> Self
}

extension HomeDevice: HomeElement {
    public static func make(_ snapshot: DeviceSnapshot, backend: (any HomeBackend)?) -> HomeDevice {
        HomeDevice(snapshot: snapshot, backend: backend)
    }
}

extension StructureSnapshot: HomeElement {
    public static func make(_ snapshot: StructureSnapshot, backend: (any HomeBackend)?) -> StructureSnapshot { snapshot }
}

extension RoomSnapshot: HomeElement {
    public static func make(_ snapshot: RoomSnapshot, backend: (any HomeBackend)?) -> RoomSnapshot { snapshot }
}

/// The whole set a query covers, at one version. It shares storage with the core's state
/// (a persistent dictionary), so handing it to many subscribers copies nothing.
public struct HomeSet<Element: HomeElement>: Collection, Sendable, Equatable {
    public typealias Storage = TreeDictionary<Element.ID, Element.Snapshot>
    public let storage: Storage
    /// The core's version this set was taken at.
    public let version: UInt64
    /// Who caused the change that produced this set (nil for the set handed out on subscribing).
    public let origin: ChangeOrigin?
    let backend: (any HomeBackend)?

    init(storage: Storage, version: UInt64, origin: ChangeOrigin? = nil, backend: (any HomeBackend)?) {
        self.storage = storage
        self.version = version
        self.origin = origin
        self.backend = backend
    }

    public var startIndex: Storage.Index { storage.startIndex }
    public var endIndex: Storage.Index { storage.endIndex }
    public func index(after i: Storage.Index) -> Storage.Index { storage.index(after: i) }
    public subscript(position: Storage.Index) -> Element { Element.make(storage[position].value, backend: backend) }
    public var count: Int { storage.count }

    /// The element with this ID, if the set has it.
    public subscript(id id: Element.ID) -> Element? { storage[id].map { Element.make($0, backend: backend) } }

    public static func == (a: Self, b: Self) -> Bool { a.storage == b.storage }
}

/// One change a `stream()` delivers.
public enum QueryChange<Element: HomeElement>: Sendable {
    /// The whole set: first on subscribing, and again when this subscriber fell behind.
    case snapshot(HomeSet<Element>)
    case added(Element)
    case updated(Element)
    case removed(Element.ID)
}

/// A query over devices, structures or rooms (Google Home APIs `Query`).
public struct Query<Element: HomeElement>: Sendable {
    let home: Home
    let kind: HomeCore.QueryKind

    /// The current set.
    public func list() async throws -> [Element] { Array(try home.core.currentSet(kind, for: home.principal, backend: home) as HomeSet<Element>) }

    /// The whole set now, and again on every change to any member. A slow consumer gets only
    /// the newest set (coalesced).
    public func batched() -> Updates<HomeSet<Element>> { home.core.subscribeBatched(kind, home: home) }

    /// The whole set now (as `.snapshot`), then only what changes.
    public func stream() -> Updates<QueryChange<Element>> { home.core.subscribeStream(kind, home: home) }
}
