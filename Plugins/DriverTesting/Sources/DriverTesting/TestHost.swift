public import DriverAPI
public import HomeModel
import Synchronization

/// An in-memory host for testing a plugin without the daemon.
///
/// Feed it configuration, start the plugin, await what it publishes, send it commands and
/// advance its clock (give the plugin ``clock`` where it would take a `ContinuousClock`):
///
/// ```swift
/// let host = TestHost(configuration: ["lines": [...]])
/// let run = try host.start(MyPlugin(clock: host.clock))
/// let device = await host.waitForDevice("door")
/// try await host.command("relay", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
/// await host.clock.waitForSleepers()
/// host.clock.advance(by: .seconds(5))
/// await host.waitForValue("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, equals: true)
/// run.cancel()
/// ```
///
/// Everything the plugin does is recorded and also published as an `AsyncStream` of
/// ``Happening`` (``happenings()``), so tests await instead of sleeping.
public final class TestHost: DriverContext, Sendable {
    /// Something the plugin did.
    public enum Happening: Hashable, Sendable {
        case published(DeviceDescription)
        case removed(String)
        case reported(AttributeReport)
        case emitted(EventReport)
        case connectivity(ConnectivityState, device: String?)
        case logged(LogLevel, String, device: String?)
        case counted(String, by: Int)
        case health(PluginHealth)
        case traitConnectivity(ConnectivityState, device: String, trait: TraitID, deviceType: DeviceTypeID?)
        /// A value the daemon would refuse (``TestHost/refusals``).
        case refused(device: String, String)
    }

    struct State {
        var devices: [String: DeviceDescription] = [:]
        var values: [String: [TraitID: [AttributeID: Value]]] = [:]
        var connectivity: [String: ConnectivityState] = [:]
        var events: [EventReport] = []
        var logs: [(LogLevel, String)] = []
        var counts: [String: Int] = [:]
        var health: [PluginHealth] = []
        var traitConnectivity: [String: [TraitID: ConnectivityState]] = [:]
        var refusals: [String] = []
        var catalog = Catalog.standard
        var waiters: [(id: Int, continuation: AsyncStream<Happening>.Continuation)] = []
        var nextWaiter = 0
    }

    public let pluginID: String
    public let configuration: PluginConfiguration
    /// A clock for the plugin under test: it moves only when the test advances it.
    public let clock: ManualClock
    let state = Mutex(State())
    let plugin = Mutex<(any DriverPlugin)?>(nil)

    /// A host that gives the plugin `configuration` as its section of `test.yaml`.
    public init(pluginID: String = "test", configuration: Value = .object([:]), clock: ManualClock = ManualClock()) {
        self.pluginID = pluginID
        self.configuration = PluginConfiguration(value: configuration, file: "test.yaml", keyPath: "plugins.\(pluginID)")
        self.clock = clock
    }

    /// A host that gives the plugin a configuration with file, key path and line numbers, as
    /// `hearthd` would after reading `hearth.yaml`.
    public init(pluginID: String = "test", configuration: PluginConfiguration, clock: ManualClock = ManualClock()) {
        self.pluginID = pluginID
        self.configuration = configuration
        self.clock = clock
    }

    // MARK: DriverContext

    public func publish(_ device: DeviceDescription) {
        for type in device.types {
            for (trait, attrs) in type.traits {
                for (attribute, value) in attrs { refuseIfInvalid(device.localID, trait, attribute, value) }
            }
        }
        record(.published(device)) { s in
            s.devices[device.localID] = device
            var values: [TraitID: [AttributeID: Value]] = s.values[device.localID] ?? [:]
            for type in device.types {
                for (trait, attrs) in type.traits { values[trait, default: [:]].merge(attrs) { _, new in new } }
            }
            s.values[device.localID] = values
        }
    }

    public func remove(device localID: String) {
        record(.removed(localID)) { s in
            s.devices[localID] = nil
            s.values[localID] = nil
        }
    }

    public func report(_ reports: [AttributeReport]) {
        for r in reports {
            refuseIfInvalid(r.localID, r.trait, r.attribute, r.value)
            record(.reported(r)) { s in s.values[r.localID, default: [:]][r.trait, default: [:]][r.attribute] = r.value }
        }
    }

    public func emit(_ event: EventReport) { record(.emitted(event)) { s in s.events.append(event) } }

    public func setConnectivity(_ state: ConnectivityState, device localID: String?) {
        record(.connectivity(state, device: localID)) { s in
            if let localID {
                s.connectivity[localID] = state
            } else {
                for id in s.devices.keys { s.connectivity[id] = state }
            }
        }
    }

    public func log(_ level: LogLevel, _ message: String, device localID: String?) {
        record(.logged(level, message, device: localID)) { s in s.logs.append((level, message)) }
    }

    public func count(_ name: String, by amount: Int) {
        record(.counted(name, by: amount)) { s in s.counts[name, default: 0] += amount }
    }

    public func setConnectivity(_ state: ConnectivityState, device localID: String, trait: TraitID, deviceType: DeviceTypeID?) {
        record(.traitConnectivity(state, device: localID, trait: trait, deviceType: deviceType)) { s in
            s.traitConnectivity[localID, default: [:]][trait] = state
        }
    }

    public func reportHealth(_ health: PluginHealth) {
        record(.health(health)) { s in s.health.append(health) }
    }

    // MARK: Driving the plugin

    /// Checks the configuration as the daemon would before starting the plugin: decodes it into
    /// the plugin's ``DriverPlugin/configurationType``, then calls its `validate`.
    ///
    /// - Throws: what the daemon would log, e.g. `HomeError.invalidArgument("test.yaml: plugins.test.pin: expected an integer…")`.
    public func checkConfiguration(of plugin: any DriverPlugin) throws {
        try plugin.checkConfiguration(configuration)
    }

    /// Validates the configuration, adds the plugin's vendor traits to the catalogue (as the
    /// daemon does; a declaration it would refuse throws here) and runs the plugin in a task;
    /// cancel the task to stop it.
    public func start(_ plugin: any DriverPlugin) throws -> Task<Void, any Error> {
        try checkConfiguration(of: plugin)
        let catalog = try Catalog.standard.adding(vendorTraits: plugin.vendorTraits)
        state.withLock { $0.catalog = catalog }
        self.plugin.withLock { $0 = plugin }
        return Task { try await plugin.run(context: self) }
    }

    /// Sends a command to the running plugin, as the core would.
    @discardableResult
    public func command(
        _ localID: String, deviceType: DeviceTypeID? = nil, trait: TraitID, command: CommandID, arguments: [String: Value] = [:]
    ) async throws -> Value {
        guard let plugin = plugin.withLock({ $0 }) else { throw HomeError.notFound("no plugin started") }
        let type = deviceType ?? state.withLock { s in
            s.devices[localID]?.types.first { $0.traits[trait] != nil }?.id
        } ?? 0
        return try await plugin.handle(
            DriverCommand(localID: localID, deviceType: type, trait: trait, command: command, arguments: arguments, origin: "test"),
            context: self)
    }

    /// Writes an attribute of the running plugin's device, as the core would.
    public func write(
        _ localID: String, deviceType: DeviceTypeID? = nil, trait: TraitID, attribute: AttributeID, value: Value
    ) async throws {
        guard let plugin = plugin.withLock({ $0 }) else { throw HomeError.notFound("no plugin started") }
        let type = deviceType ?? state.withLock { s in
            s.devices[localID]?.types.first { $0.traits[trait] != nil }?.id
        } ?? 0
        try await plugin.write(
            DriverWrite(localID: localID, deviceType: type, trait: trait, attribute: attribute, value: value, origin: "test"),
            context: self)
    }

    // MARK: Observing

    /// Everything the plugin does from now on.
    public func happenings() -> AsyncStream<Happening> {
        let (stream, continuation) = AsyncStream<Happening>.makeStream()
        let id = state.withLock { s in
            s.nextWaiter += 1
            s.waiters.append((s.nextWaiter, continuation))
            return s.nextWaiter
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { s in s.waiters.removeAll { $0.id == id } }
        }
        return stream
    }

    /// The catalogue the plugin runs against: the standard one plus its vendor traits.
    public var catalog: Catalog { state.withLock { $0.catalog } }

    /// Values the daemon would refuse (out of range, wrongly typed, not an attribute of the
    /// trait), each with the daemon's message: the same rule for published and reported values.
    public var refusals: [String] { state.withLock { $0.refusals } }

    /// Published devices by local ID.
    public var devices: [String: DeviceDescription] { state.withLock { $0.devices } }
    /// The latest value of an attribute.
    public func value(_ localID: String, _ trait: TraitID, _ attribute: AttributeID) -> Value? {
        state.withLock { $0.values[localID]?[trait]?[attribute] }
    }
    public func connectivity(of localID: String) -> ConnectivityState? { state.withLock { $0.connectivity[localID] } }
    /// What the plugin last set for one trait of the device (`setConnectivity(_:device:trait:deviceType:)`).
    public func connectivity(of localID: String, trait: TraitID) -> ConnectivityState? {
        state.withLock { $0.traitConnectivity[localID]?[trait] }
    }
    public var events: [EventReport] { state.withLock { $0.events } }
    public var logLines: [String] { state.withLock { $0.logs.map { "\($0.0): \($0.1)" } } }
    /// What the plugin has added to its counter `name` (``DriverContext/count(_:by:)``).
    public func counted(_ name: String) -> Int { state.withLock { $0.counts[name] ?? 0 } }
    /// What the plugin last said with `reportHealth` (nil before its first report).
    public var health: PluginHealth? { state.withLock { $0.health.last } }
    /// Every health report, in order.
    public var healthReports: [PluginHealth] { state.withLock { $0.health } }

    /// Waits until `condition` holds, checking after every happening.
    public func wait(until condition: @Sendable (TestHost) -> Bool) async {
        let stream = happenings()
        if condition(self) { return }
        for await _ in stream where condition(self) { return }
    }

    /// Waits for the device to be published and returns its description.
    public func waitForDevice(_ localID: String) async -> DeviceDescription {
        await wait { $0.devices[localID] != nil }
        return devices[localID]!
    }

    /// Waits until the attribute has `value` (reported, or published as an initial value).
    public func waitForValue(_ localID: String, _ trait: TraitID, _ attribute: AttributeID, equals value: Value) async {
        await wait { $0.value(localID, trait, attribute) == value }
    }

    /// Waits for the next happening that matches, and returns it.
    public func next(where matches: @Sendable (Happening) -> Bool) async -> Happening? {
        for await h in happenings() where matches(h) { return h }
        return nil
    }

    func refuseIfInvalid(_ localID: String, _ trait: TraitID, _ attribute: AttributeID, _ value: Value) {
        guard let message = catalog.refusal(trait, attribute, value) else { return }
        let line = "\(localID): \(message)"
        record(.refused(device: localID, line)) { s in s.refusals.append(line) }
    }

    func record(_ happening: Happening, _ mutate: (inout State) -> Void) {
        let waiters = state.withLock { s in
            mutate(&s)
            return s.waiters.map(\.continuation)
        }
        for w in waiters { w.yield(happening) }
    }
}
