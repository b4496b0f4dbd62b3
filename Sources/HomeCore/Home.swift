public import HomeModel
import DriverAPI
import Foundation
import HashTreeCollections
import Synchronization

/// The home as one principal sees it (Google Home APIs `Home`): queries, subscriptions,
/// commands and — for admins — layout edits and commissioning.
///
/// ```swift
/// let home = core.home(for: .system)
/// for device in try await home.devices().list() { print(device.name) }
/// for await set in home.devices().batched() { … }
/// ```
public struct Home: HomeBackend {
    public let core: HomeCore
    public let principal: Principal

    /// Commissioned devices this principal may see.
    public func devices() -> Query<HomeDevice> { Query(home: self, kind: .devices) }
    /// Devices plugins reported that wait to be commissioned (admins only; empty for others).
    public func discoveredDevices() -> Query<HomeDevice> { Query(home: self, kind: .discovered) }
    public func structures() -> Query<StructureSnapshot> { Query(home: self, kind: .structures) }
    public func rooms() -> Query<RoomSnapshot> { Query(home: self, kind: .rooms) }

    /// The device now and every time it changes; finishes when it is removed or hidden.
    public func device(id: DeviceID) -> Updates<HomeDevice> { core.subscribeDevice(id, home: self) }

    /// The device now, or `notFound`.
    public func currentDevice(id: DeviceID) throws(HomeError) -> HomeDevice {
        try core.checkSession(principal)
        let state = core.state
        guard let d = core.visible(.devices, state.devices[id], principal)
            ?? (principal.role == .admin ? state.devices[id] : nil)
        else { throw .notFound("no device \(id)") }
        return HomeDevice(snapshot: d, backend: self)
    }

    /// Every accepted change with its version and origin, for audit (admins only; the
    /// subscription ends at once for others). A slow reader loses the oldest records, counted.
    public func changes() -> Updates<ChangeRecord> { core.subscribeChanges(home: self) }

    /// Live state for every tile at once: first every commissioned device this principal may
    /// see, then, on each read, the devices whose state changed since the previous read
    /// (attribute reports and connectivity included), each once in its newest state. A slow
    /// reader costs at most one pending state per device. Devices removed or hidden are left
    /// out; ``devices()`` reports those, and renames and moves too.
    public func changedDevices() -> Updates<ChangedDevices> { core.subscribeChangedDevices(home: self) }
    /// ``changedDevices()`` for a reader that is told, not awaited: `notify` is called (on the
    /// changing thread, at most once until the next poll) when there is something to
    /// ``PolledChangedDevices/poll()``. The first poll gives every visible device.
    public func polledChangedDevices(notify: @escaping @Sendable () -> Void) -> PolledChangedDevices {
        core.subscribePolledChangedDevices(home: self, notify: notify)
    }

    /// Events (button presses, alarms) of visible devices, optionally of one device and trait.
    public func events(device: DeviceID? = nil, trait: TraitID? = nil) -> Updates<DeviceEvent> {
        core.subscribeEvents(device: device, trait: trait, home: self)
    }

    /// `permissionDenied` once this session's access has been revoked; nil while it is live.
    /// A subscription that ended says this as its failure (publishers complete with it).
    public var revocation: HomeError? {
        core.isRevoked(principal) ? .permissionDenied("this session's access was revoked") : nil
    }

    /// What a subscription of this session reports as its failure when it ends.
    var ending: @Sendable () -> HomeError? { { [self] in revocation } }

    // MARK: - HomeBackend

    public func deviceUpdates(_ id: DeviceID) -> AsyncStream<DeviceSnapshot> {
        let updates = device(id: id)
        let (stream, continuation) = AsyncStream<DeviceSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            for await d in updates { continuation.yield(d.snapshot) }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func invoke(_ request: CommandRequest) async throws -> Value {
        try await core.invoke(request, principal: principal)
    }

    public func write(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value) async throws {
        try await core.write(
            device: device, deviceType: deviceType, trait: trait, attribute: attribute, value: value, principal: principal)
    }

    public func setName(device: DeviceID, name: String) async throws -> DeviceSnapshot {
        try edit(.renameDevice(device, name: name))
        return try currentDevice(id: device).snapshot
    }

    // MARK: - Layout (admins)

    /// Applies a layout edit as this principal. Members and apps get `permissionDenied`.
    public func edit(_ edit: LayoutEdit) throws(HomeError) {
        try self.edit([edit])
    }

    /// Applies several layout edits as one, all or nothing: every edit is checked (against the
    /// state the ones before it leave) before anything changes, then the whole is saved in one
    /// storage transaction and observers see one version. When one edit is refused, none
    /// happens and its error is thrown (a rename with a move to a missing room renames nothing).
    ///
    /// ```swift
    /// try home.edit([.renameDevice(id, name: "Desk Lamp"), .moveDevice(id, to: office)])
    /// ```
    public func edit(_ edits: [LayoutEdit]) throws(HomeError) {
        try core.checkSession(principal)
        guard principal.canEditLayout else {
            throw .permissionDenied("\(principal) is a \(principal.role.rawValue); only an admin can change the layout")
        }
        guard !edits.isEmpty else { return }
        try core.apply(edits.count == 1 ? .layout(edits[0]) : .layoutEdits(edits), origin: .layout(principal.id))
    }

    /// Creates a structure; returns its ID.
    @discardableResult
    public func createStructure(named name: String) throws(HomeError) -> StructureID {
        let id = StructureID(rawValue: "structure-" + UUID().uuidString.lowercased().prefix(8))
        try edit(.createStructure(id, name: name))
        return id
    }

    /// Creates a room in a structure; returns its ID.
    @discardableResult
    public func createRoom(named name: String, in structure: StructureID) throws(HomeError) -> RoomID {
        let id = RoomID(rawValue: "room-" + UUID().uuidString.lowercased().prefix(8))
        try edit(.createRoom(id, in: structure, name: name))
        return id
    }

    /// What commissioning with this name would say: the naming rules' verdict, in the room.
    public func checkName(_ name: String, room: RoomID?) -> NamingRules.Verdict {
        NamingRules.check(name, roomName: room.flatMap { core.state.rooms[$0]?.name })
    }

    /// Commissions a discovered device: name (naming rules), structure, room, primary type.
    ///
    /// - Returns: the verdict on the name; its `warning` and `suggestions` are worth showing
    ///   (a name that repeats its room is accepted with a suggestion).
    /// - Throws: `invalidArgument` with the broken rule and suggestions for an invalid name.
    @discardableResult
    public func commission(
        _ device: DeviceID, name: String, structure: StructureID, room: RoomID? = nil, primaryType: DeviceTypeID? = nil
    ) throws(HomeError) -> NamingRules.Verdict {
        let verdict = checkName(name, room: room)
        guard verdict.isValid else {
            var message = "invalid device name '\(name)': " + verdict.violations.map(\.rule).joined(separator: "; ")
            if !verdict.suggestions.isEmpty {
                message += " (try " + verdict.suggestions.map { "'\($0)'" }.joined(separator: " or ") + ")"
            }
            throw .invalidArgument(message)
        }
        try edit(.commission(device, name: verdict.name, structure: structure, room: room, primaryType: primaryType))
        return verdict
    }
}

extension HomeCore {
    func invoke(_ request: CommandRequest, principal: Principal) async throws -> Value {
        try await counted(request.device) { try await self.send(request, principal: principal) }
    }

    func write(
        device id: DeviceID, deviceType: DeviceTypeID, trait traitID: TraitID, attribute: AttributeID, value: Value,
        principal: Principal
    ) async throws {
        try await counted(id) {
            try await self.send(device: id, deviceType: deviceType, trait: traitID, attribute: attribute, value: value, principal: principal)
        }
    }

    /// Runs a command or write to `device`, counting it and, when it throws, its error code.
    func counted<T>(_ device: DeviceID, _ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            metrics.command(plugin: device.pluginID, failed: nil)
            return result
        } catch {
            metrics.command(plugin: device.pluginID, failed: (error as? HomeError)?.code ?? .internal)
            throw error
        }
    }

    func send(_ request: CommandRequest, principal: Principal) async throws -> Value {
        let (device, plugin) = try route(request.device, request.deviceType, request.trait, principal: principal)
        let trait = catalog.trait(request.trait)
        var arguments = request.arguments
        let strict = isStrict(for: principal)
        if strict {
            guard let trait else {
                throw HomeError.unsupportedOperation("trait \(request.trait.hex) is not in the catalogue")
            }
            guard let command = trait.command(request.command) else {
                let known = trait.commands.map(\.swiftName).joined(separator: ", ")
                throw HomeError.unsupportedOperation(
                    "trait \(trait.name) has no command \(request.command.hex)" + (known.isEmpty ? "" : " (it has: \(known))"))
            }
            arguments = try command.validate(arguments: request.arguments, trait: trait)
        }
        try Self.checkReachable(device, request.deviceType, request.trait, catalog: catalog)
        guard let handler = handler(for: plugin) else {
            throw HomeError.deviceOffline("plugin \(plugin) is not running; \(device.name) cannot be reached")
        }
        let command = DriverCommand(
            localID: device.id.localID, deviceType: request.deviceType, trait: request.trait, command: request.command,
            arguments: arguments, origin: principal.id)
        return try await withTimeout(commandTimeout, what: "command to \(device.name)") {
            do {
                return try await handler.handle(command)
            } catch let error as HomeError {
                // Lenient: nothing was checked, so the driver's refusal is its error, not a
                // refusal by the catalogue (`unsupportedOperation`); the app tells them apart.
                if !strict, error.code == .unsupportedOperation || error.code == .invalidArgument {
                    throw HomeError.driverError("plugin \(plugin) refused the command: \(error.message)")
                }
                throw error
            } catch {
                throw HomeError.driverError("plugin \(plugin) failed the command: \(error)")
            }
        }
    }

    func send(
        device id: DeviceID, deviceType: DeviceTypeID, trait traitID: TraitID, attribute: AttributeID, value: Value,
        principal: Principal
    ) async throws {
        let (device, plugin) = try route(id, deviceType, traitID, principal: principal)
        let strict = isStrict(for: principal)
        if strict {
            guard let trait = catalog.trait(traitID), let a = trait.attribute(attribute) else {
                throw HomeError.unsupportedOperation("no attribute \(attribute.hex) in trait \(traitID.hex)")
            }
            guard a.writable else { throw HomeError.unsupportedOperation("attribute \(trait.name).\(a.name) is read-only") }
            try a.validate(value, in: trait)
        }
        try Self.checkReachable(device, deviceType, traitID, catalog: catalog)
        guard let handler = handler(for: plugin) else {
            throw HomeError.deviceOffline("plugin \(plugin) is not running; \(device.name) cannot be reached")
        }
        let write = DriverWrite(
            localID: id.localID, deviceType: deviceType, trait: traitID, attribute: attribute, value: value, origin: principal.id)
        try await withTimeout(commandTimeout, what: "write to \(device.name)") {
            do {
                try await handler.write(write)
            } catch let error as HomeError where !strict && (error.code == .unsupportedOperation || error.code == .invalidArgument) {
                throw HomeError.driverError("plugin \(plugin) refused the write: \(error.message)")
            }
        }
    }

    /// Fails fast with `deviceOffline` when the addressed trait is `offline` or `unknown` (an
    /// MQTT entity whose availability topic says offline, a restored device its plugin has
    /// not published yet), instead of waiting for a driver that cannot reach it.
    static func checkReachable(_ device: DeviceSnapshot, _ type: DeviceTypeID, _ trait: TraitID, catalog: Catalog) throws(HomeError) {
        guard let state = device.type(type)?.traits[trait]?.sourceConnectivity.connectivityState else { return }
        switch state {
        case .offline, .unknown:
            let name = catalog.trait(trait)?.name ?? trait.hex
            throw .deviceOffline("\(device.name) (\(device.id)) cannot be reached: its \(name) is \(state)")
        case .online, .partiallyOnline:
            return
        }
    }

    /// Finds the device as the principal sees it and checks it may be controlled.
    func route(_ id: DeviceID, _ type: DeviceTypeID, _ trait: TraitID, principal: Principal) throws(HomeError) -> (DeviceSnapshot, String) {
        try checkSession(principal)
        let state = self.state
        guard let device = visible(.devices, state.devices[id], principal)
            ?? (principal.role == .admin ? state.devices[id] : nil)
        else { throw .notFound("no device \(id)") }
        if let scope = scoped(principal).scope, !scope.canControl {
            throw .permissionDenied("this app's grant allows reading only")
        }
        guard let t = device.type(type) else {
            throw .unsupportedOperation(
                "\(device.name) is not a \(catalog.deviceType(type)?.name ?? type.hex) (it is: "
                    + device.types.map { catalog.deviceType($0.id)?.name ?? $0.id.hex }.joined(separator: ", ") + ")")
        }
        if isStrict(for: principal), t.traits[trait] == nil {
            throw .unsupportedOperation(
                "\(device.name) has no \(catalog.trait(trait)?.name ?? trait.hex) trait on its \(catalog.deviceType(type)?.name ?? type.hex) type")
        }
        return (device, id.pluginID)
    }
}

/// Runs `body`, throwing `timeout` if it takes longer than `limit`.
///
/// The caller gets `timeout` at the deadline even when `body` ignores cancellation (a driver
/// stuck in a call that never returns): `body` runs in a task of its own, which is cancelled then
/// and whose late result is dropped. A task group would wait for it, and the caller with it.
func withTimeout<T: Sendable>(_ limit: Duration, what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = TimeoutRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            race.start(c, limit: limit, timeout: HomeError.timeout("\(what) took longer than \(limit)"), body)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of a call's result, its deadline and its caller's cancellation ends the call; the
/// others find it ended. Nothing is resumed or cancelled while the lock is held.
final class TimeoutRace<T: Sendable>: Sendable {
    struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var tasks: [Task<Void, Never>] = []
    }
    let state = Mutex(State())

    func start(
        _ c: CheckedContinuation<T, any Error>, limit: Duration, timeout: HomeError, _ body: @escaping @Sendable () async throws -> T
    ) {
        let ended = state.withLock { s -> Result<T, any Error>? in
            if s.result == nil { s.continuation = c }
            return s.result
        }
        if let ended {
            c.resume(with: ended)
            return
        }
        let work = Task {
            do { self.finish(.success(try await body())) } catch { self.finish(.failure(error)) }
        }
        let timer = Task {
            do { try await Task.sleep(for: limit) } catch { return }
            self.finish(.failure(timeout))
        }
        let already = state.withLock { s -> Bool in
            if s.result == nil { s.tasks = [work, timer] }
            return s.result != nil
        }
        if already {
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<T, any Error>) {
        let (c, tasks) = state.withLock { s -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard s.result == nil else { return (nil, []) }
            s.result = result
            defer {
                s.continuation = nil
                s.tasks = []
            }
            return (s.continuation, s.tasks)
        }
        for t in tasks { t.cancel() }
        c?.resume(with: result)
    }
}
