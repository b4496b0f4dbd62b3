/// A request to run a command on one trait of one device type of a device.
public struct CommandRequest: Hashable, Sendable, Codable {
    public let device: DeviceID
    public let deviceType: DeviceTypeID
    public let trait: TraitID
    public let command: CommandID
    /// Arguments keyed by the spec's field name.
    public let arguments: [String: Value]

    public init(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, command: CommandID, arguments: [String: Value] = [:]) {
        self.device = device
        self.deviceType = deviceType
        self.trait = trait
        self.command = command
        self.arguments = arguments
    }
}

/// What typed views call to act and observe: the in-process `Home` of HomeCore and the
/// network client of HearthClient both implement it.
public protocol HomeBackend: Sendable {
    /// Runs a command; returns the command's response (``Value/null`` when it has none).
    func invoke(_ request: CommandRequest) async throws -> Value
    /// Writes a writable attribute.
    func write(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value) async throws
    /// The device now, then every time it changes; finishes when the device is removed.
    func deviceUpdates(_ id: DeviceID) -> AsyncStream<DeviceSnapshot>
    /// Renames a device (naming rules apply) and returns it renamed.
    func setName(device: DeviceID, name: String) async throws -> DeviceSnapshot
    /// `permissionDenied` once this session's access was revoked, nil while it is live: why a
    /// subscription through this backend ended.
    var revocation: HomeError? { get }
}

extension HomeBackend {
    public var revocation: HomeError? { nil }
}

/// Where a typed trait or device type sits: which device, which device type, and the backend
/// its commands go to (nil for a detached value, whose commands throw).
public struct TraitBinding: Sendable {
    public let device: DeviceID
    public let deviceType: DeviceTypeID
    public let backend: (any HomeBackend)?

    public init(device: DeviceID, deviceType: DeviceTypeID, backend: (any HomeBackend)?) {
        self.device = device
        self.deviceType = deviceType
        self.backend = backend
    }

    /// Sends a command through the backend.
    @discardableResult
    public func invoke(_ trait: TraitID, _ command: CommandID, _ arguments: [String: Value] = [:]) async throws -> Value {
        guard let backend else {
            throw HomeError.unsupportedOperation("this trait value is detached from a home; commands need a Home")
        }
        return try await backend.invoke(
            CommandRequest(device: device, deviceType: deviceType, trait: trait, command: command, arguments: arguments))
    }

    /// Writes an attribute through the backend.
    public func write(_ trait: TraitID, _ attribute: AttributeID, _ value: Value) async throws {
        guard let backend else {
            throw HomeError.unsupportedOperation("this trait value is detached from a home; writes need a Home")
        }
        try await backend.write(device: device, deviceType: deviceType, trait: trait, attribute: attribute, value: value)
    }
}

/// Metadata of a trait (Google Home APIs `TraitMetadata`).
public struct TraitMetadata: Hashable, Sendable {
    public let sourceConnectivity: SourceConnectivity
    public init(sourceConnectivity: SourceConnectivity) { self.sourceConnectivity = sourceConnectivity }
}

/// Metadata of a device type (Google Home APIs `DeviceTypeMetadata`).
public struct DeviceTypeMetadata: Hashable, Sendable {
    /// Whether this is the device's primary type: the one a UI shows it as.
    public let isPrimaryType: Bool
    /// Aggregated over the device type's traits.
    public let sourceConnectivity: SourceConnectivity
    public init(isPrimaryType: Bool, sourceConnectivity: SourceConnectivity) {
        self.isPrimaryType = isPrimaryType
        self.sourceConnectivity = sourceConnectivity
    }
}

/// A typed view of a trait. Standard traits are generated (``OnOffTrait``); a vendor defines
/// its own under its namespace and reads it with `deviceType.traits[Vendor.SomeTrait.self]`.
///
/// Two views are equal when they show the same state, so
/// `.compactMap { $0.matterTraits.onOffTrait }.removeDuplicates()` works.
public protocol Trait: Sendable, Equatable {
    /// The trait (cluster) ID.
    static var identifier: TraitID { get }
    /// Builds the view over a trait's state.
    init(state: TraitState, binding: TraitBinding)
    var state: TraitState { get }
}

extension Trait {
    /// Equal state (attributes, connectivity): what `removeDuplicates()` on one device's
    /// trait needs. Where the trait sits is not compared; compare device types for that.
    public static func == (a: Self, b: Self) -> Bool { a.state == b.state }

    public var metadata: TraitMetadata { TraitMetadata(sourceConnectivity: state.sourceConnectivity) }
}

/// A typed view of a device type, such as ``OnOffLightDeviceType``. Equal when it shows the
/// same state of the same device.
public protocol DeviceType: Sendable, Equatable {
    static var identifier: DeviceTypeID { get }
    init(state: DeviceTypeState, binding: TraitBinding)
    var state: DeviceTypeState { get }
    var binding: TraitBinding { get }
}

extension DeviceType {
    /// Equal state on the same device (the backend is not compared).
    public static func == (a: Self, b: Self) -> Bool { a.state == b.state && a.binding.device == b.binding.device }

    public var metadata: DeviceTypeMetadata {
        DeviceTypeMetadata(isPrimaryType: state.isPrimary, sourceConnectivity: state.sourceConnectivity)
    }

    /// The standard (Matter) traits of this device type, each nil when absent.
    public var matterTraits: MatterTraits { MatterTraits(state: state, binding: binding) }

    /// All traits, standard and vendor, by typed view: `traits[Vendor.SomeTrait.self]`.
    public var traits: TraitCollection { TraitCollection(state: state, binding: binding) }
}

/// A device type's traits, indexable by their typed view.
public struct TraitCollection: Sendable {
    let state: DeviceTypeState
    let binding: TraitBinding

    public subscript<T: Trait>(_ type: T.Type) -> T? {
        state.traits[T.identifier].map { T(state: $0, binding: binding) }
    }

    public func contains<T: Trait>(_ type: T.Type) -> Bool { state.traits[T.identifier] != nil }
    public var ids: [TraitID] { state.traits.keys.sorted() }
}

/// A device of the home: its snapshot plus the backend its commands and subscriptions go
/// through (Google Home APIs `HomeDevice`).
///
/// A copy is one reference: the snapshot and backend live in one shared, immutable box. The
/// core hands each change to every subscriber, which buffer it per device, sort it and keep the
/// last one sent; with the snapshot inline every such copy retained and released each of its
/// strings and arrays (a sixth of the daemon's time in an MQTT flood).
public struct HomeDevice: Identifiable, Sendable {
    @usableFromInline final class Storage: Sendable {
        @usableFromInline let snapshot: DeviceSnapshot
        @usableFromInline let backend: (any HomeBackend)?

        init(snapshot: DeviceSnapshot, backend: (any HomeBackend)?) {
            self.snapshot = snapshot
            self.backend = backend
        }
    }

    @usableFromInline let storage: Storage

    public init(snapshot: DeviceSnapshot, backend: (any HomeBackend)?) {
        storage = Storage(snapshot: snapshot, backend: backend)
    }

    // Inlinable: a reader borrows the snapshot from the box instead of copying it out.
    @inlinable public var snapshot: DeviceSnapshot { _read { yield storage.snapshot } }
    @inlinable public var backend: (any HomeBackend)? { storage.backend }

    @inlinable public var id: DeviceID { storage.snapshot.id }
    public var name: String { snapshot.name }
    public var roomID: RoomID? { snapshot.roomID }
    public var structureID: StructureID? { snapshot.structureID }
    public var sourceConnectivity: SourceConnectivity { snapshot.sourceConnectivity }
    public var types: DeviceTypes { DeviceTypes(device: self) }

    /// Renames the device (naming rules apply) and returns it renamed.
    public func setName(_ name: String) async throws -> HomeDevice {
        guard let backend else { throw HomeError.unsupportedOperation("this device is detached from a home") }
        return HomeDevice(snapshot: try await backend.setName(device: id, name: name), backend: backend)
    }
}

extension HomeDevice: Equatable {
    public static func == (a: HomeDevice, b: HomeDevice) -> Bool { a.storage === b.storage || a.snapshot == b.snapshot }
}

/// The device types of a device: `get`, `contains`, `subscribe`, `subscribeAll`.
public struct DeviceTypes: Sendable {
    let device: HomeDevice

    /// Where the device's commands and subscriptions go (nil for a detached device).
    public var backend: (any HomeBackend)? { device.backend }

    func make<T: DeviceType>(_ type: T.Type, from snapshot: DeviceSnapshot) -> T? {
        snapshot.type(T.identifier).map {
            T(state: $0, binding: TraitBinding(device: snapshot.id, deviceType: T.identifier, backend: device.backend))
        }
    }

    /// The device type, or nil when the device does not expose it.
    public func get<T: DeviceType>(_ type: T.Type) async -> T? { make(type, from: device.snapshot) }

    /// The device type now, without suspending.
    public func current<T: DeviceType>(_ type: T.Type) -> T? { make(type, from: device.snapshot) }

    public func contains<T: DeviceType>(_ type: T.Type) -> Bool { device.snapshot.type(T.identifier) != nil }

    /// IDs of all device types, primary first.
    public var ids: [DeviceTypeID] {
        device.snapshot.types.sorted { $0.isPrimary && !$1.isPrimary }.map(\.id)
    }

    /// The device type now and after every change to its traits; finishes at once when the
    /// device lacks the type, and when the device is removed.
    public func subscribe<T: DeviceType>(_ type: T.Type) -> AsyncStream<T> {
        guard contains(type), let backend = device.backend else {
            let (stream, continuation) = AsyncStream<T>.makeStream()
            if let value = current(type), device.backend == nil { continuation.yield(value) }
            continuation.finish()
            return stream
        }
        let updates = backend.deviceUpdates(device.id)
        let (stream, continuation) = AsyncStream<T>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            var last: DeviceTypeState?
            for await snapshot in updates {
                guard let state = snapshot.type(T.identifier) else { break }
                if state == last { continue }
                last = state
                continuation.yield(T(state: state, binding: TraitBinding(device: snapshot.id, deviceType: T.identifier, backend: backend)))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Every device type, now and after every change, as a collection indexable by type.
    public func subscribeAll() -> AsyncStream<DeviceTypeSet> {
        guard let backend = device.backend else {
            let (stream, continuation) = AsyncStream<DeviceTypeSet>.makeStream()
            continuation.yield(DeviceTypeSet(snapshot: device.snapshot, backend: nil))
            continuation.finish()
            return stream
        }
        let updates = backend.deviceUpdates(device.id)
        let (stream, continuation) = AsyncStream<DeviceTypeSet>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            var last: [DeviceTypeState]?
            for await snapshot in updates {
                if snapshot.types == last { continue }
                last = snapshot.types
                continuation.yield(DeviceTypeSet(snapshot: snapshot, backend: backend))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// All device types of a device at one moment, indexable by typed view: `set[OnOffLightDeviceType.self]`.
public struct DeviceTypeSet: Sendable {
    public let snapshot: DeviceSnapshot
    let backend: (any HomeBackend)?

    public subscript<T: DeviceType>(_ type: T.Type) -> T? {
        snapshot.type(T.identifier).map {
            T(state: $0, binding: TraitBinding(device: snapshot.id, deviceType: T.identifier, backend: backend))
        }
    }

    public var ids: [DeviceTypeID] { snapshot.types.map(\.id) }
}

extension DeviceTypeSet: Equatable {
    /// The same device types in the same state on the same device.
    public static func == (a: DeviceTypeSet, b: DeviceTypeSet) -> Bool { a.snapshot.id == b.snapshot.id && a.snapshot.types == b.snapshot.types }
}
