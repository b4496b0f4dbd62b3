public import HomeModel
public import DriverAPI
public import Logging
import CoreMetrics
import HashTreeCollections
import Synchronization
import Foundation

/// Carries out commands for one plugin's devices; the plugin host registers one per plugin.
public protocol CommandHandler: Sendable {
    func handle(_ command: DriverCommand) async throws -> Value
    func write(_ write: DriverWrite) async throws
}

/// The observer core: one writer over ``HomeState``, many observers.
///
/// Drivers report through a ``DriverContext`` from ``context(for:configuration:)``; clients
/// read, observe and act through a ``Home`` bound to a principal. Changes are applied under a
/// lock by the pure state machine; observers are handed their updates after the lock is
/// released, each into its own bounded buffer, so a slow observer never slows a driver.
public final class HomeCore: Sendable {
    /// The running catalogue: the standard one plus the vendor traits plugins declared
    /// (``addVendorTraits(_:from:)``). A cheap copy.
    public var catalog: Catalog { catalogBox.withLock { $0 } }
    /// Guarded on its own: read before ``inner`` is locked, never while holding it.
    let catalogBox: Mutex<Catalog>
    /// Strict: unsupported traits and commands are refused before they reach a driver.
    /// Lenient: they are sent, and the driver's error is reported back.
    public let strictOperationValidation: Bool
    /// How long a command may take before the caller gets `timeout`.
    public let commandTimeout: Duration
    let logger: Logger
    let store: (any LayoutStore)?
    let now: @Sendable () -> UInt64

    enum QueryKind: Sendable { case devices, discovered, structures, rooms }

    /// A registered observer: told about every applied change while the lock is held, it returns
    /// the delivery to run once the lock is released (or nil when the change is not its concern).
    struct Observer: Sendable {
        let session: String?
        let device: DeviceID?
        /// `before` is nil for changes that cannot change what anyone sees (reports, events,
        /// connectivity).
        let onChange: @Sendable (_ before: HomeState?, _ after: HomeState, _ outcome: HomeOutcome) -> (@Sendable () -> Void)?
        let finish: @Sendable () -> Void
        /// Delivers the subscription's set again after its session's scope changed.
        var refresh: (@Sendable () -> Void)? = nil
        /// A `device(id:)` observer's delivery, given its device as this change left it: the
        /// core looks the device up and works out each distinct view once per change
        /// (``DeviceViews``), not once per subscriber. Used instead of `onChange` when set.
        var onDevice: (@Sendable (_ views: inout DeviceViews, _ version: UInt64) -> (@Sendable () -> Void)?)? = nil
    }

    struct Inner: Sendable {
        /// The state, with the core's unversioned last-seen table (``lastSeen``).
        var state = HomeState(lastSeenTable: LastSeenTable())
        /// The running catalogue, as ``catalogBox`` holds it: the state machine reads it here,
        /// under the lock it already holds (no second lock and no copy per change).
        var catalog: Catalog
        var observers: [Int: Observer] = [:]
        var deviceObservers: [DeviceID: Set<Int>] = [:]
        var eventObservers: [Int: Observer] = [:]
        /// Observers of every change (``Home/changes()``).
        var auditObservers: [Int: Observer] = [:]
        /// Observers of every device change, attributes included (``Home/changedDevices()``).
        var updateObservers: [Int: Observer] = [:]
        var nextID = 0
        var revoked: Set<String> = []
        var handlers: [String: any CommandHandler] = [:]
        /// The lossless change tap (``installTap(_:seed:)``), when automations are loaded.
        var tap: ChangeTap?
    }

    let inner: Mutex<Inner>
    /// Grant scopes changed while their sessions are open (session → scope): they replace the
    /// scope a session's principal was created with. Read under the core's lock too, so it
    /// never takes `inner` itself.
    let scopeOverrides = Mutex<[String: GrantScope]>([:])
    /// Counters and gauges (`/metrics`).
    public let metrics: HomeMetrics
    let rejections = Mutex<(logged: Set<String>, count: Int)>(([], 0))

    public init(
        catalog: Catalog = .standard, store: (any LayoutStore)? = nil, strictOperationValidation: Bool = true,
        commandTimeout: Duration = .seconds(10), logger: Logger = Logger(label: "hearth.core"),
        metrics: HomeMetrics = HomeMetrics(), now: (@Sendable () -> UInt64)? = nil
    ) {
        self.metrics = metrics
        self.catalogBox = Mutex(catalog)
        self.inner = Mutex(Inner(catalog: catalog))
        self.store = store
        self.strictOperationValidation = strictOperationValidation
        self.commandTimeout = commandTimeout
        self.logger = logger
        self.now = now ?? { UInt64(Date().timeIntervalSince1970 * 1e9) }
    }

    /// Adds a plugin's vendor traits to the running catalogue (checked by
    /// ``HomeModel/Catalog/adding(vendorTraits:)``); from then on their values are validated
    /// and commands to them routed like a standard trait's.
    ///
    /// - Throws: ``HomeError`` `invalidArgument` or `conflict` naming the trait; nothing is
    ///   added then.
    public func addVendorTraits(_ traits: [TraitDescriptor], from pluginID: String) throws(HomeError) {
        guard !traits.isEmpty else { return }
        let result: Result<Void, HomeError> = catalogBox.withLock { catalog in
            do throws(HomeError) {
                catalog = try catalog.adding(vendorTraits: traits)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if case .failure(let error) = result {
            throw HomeError(error.code, "plugin \(pluginID): \(error.message)")
        }
        // Under the core's lock (the order `visible(_:_:_:)` takes them in): the last one to
        // get here copies the newest catalogue.
        inner.withLock { inner in inner.catalog = catalogBox.withLock { $0 } }
        logger.info(
            "vendor traits added", metadata: ["plugin": "\(pluginID)", "traits": "\(traits.map(\.qualifiedName).joined(separator: ", "))"])
    }

    /// Loads the layout and device registry from the store. Call once, before plugins start.
    public func restore() throws {
        guard let store else { return }
        let (s, r, d) = try store.loadLayout()
        _ = try apply(.restore(structures: s, rooms: r, devices: d), persist: false)
    }

    /// The current state (a cheap copy: the collections are persistent).
    public var state: HomeState { inner.withLock { $0.state } }

    /// When each device last reported (core clock, nanoseconds since the Unix epoch): a copy
    /// of the core's table, which is not versioned with ``state`` (its `lastSeen` stays empty).
    public var lastSeen: [DeviceID: UInt64] { inner.withLock { $0.state.lastSeenTable?.times ?? $0.state.lastSeen.reduce(into: [:]) { $0[$1.key] = $1.value } } }

    /// A session for `principal`.
    public func home(for principal: Principal) -> Home { Home(core: self, principal: principal) }

    // MARK: - Applying changes

    /// Applies a change: under the lock, the state machine moves and observers pick their
    /// deliveries; after it, deliveries run and problems are logged.
    ///
    /// Layout edits are persisted before they become visible (a failing store refuses them).
    @discardableResult
    func apply(_ change: HomeChange, origin: ChangeOrigin? = nil, persist: Bool = true) throws(HomeError) -> HomeOutcome {
        let origin = origin ?? change.defaultOrigin
        let isLayout: Bool
        switch change {
        case .layout, .layoutEdits: isLayout = true
        default: isLayout = false
        }
        // Reports, events and connectivity never change what a principal may see, so they
        // are applied in place (no copy of the previous version is kept for diffs).
        let keepsVisibility: Bool
        switch change {
        case .report, .event, .connectivity: keepsVisibility = true
        default: keepsVisibility = false
        }
        let result: Result<(HomeOutcome, [@Sendable () -> Void], LayoutDelta?), HomeError> = inner.withLock { inner in
            let before: HomeState?
            var outcome: HomeOutcome
            var delta: LayoutDelta?
            if keepsVisibility {
                // In place: no copy of the state is taken (each copy retains every tree).
                before = nil
                do throws(HomeError) {
                    outcome = try inner.state.apply(change, catalog: inner.catalog)
                } catch {
                    return .failure(error)
                }
                outcome.origin = origin
                if persist, store != nil, !outcome.isEmpty, Self.mayNeedSaving(change, outcome) {
                    var d = Self.delta(outcome, inner.state, at: now())
                    d.fromDriver = true
                    if !d.isEmpty { delta = d }
                }
            } else {
                before = inner.state
                // `next` shares the core's last-seen table: a change refused below after its
                // apply may already have moved a time there (at worst a removed device's time is
                // forgotten early; the next report writes it again).
                var next = inner.state
                do throws(HomeError) {
                    outcome = try next.apply(change, catalog: inner.catalog)
                } catch {
                    return .failure(error)
                }
                outcome.origin = origin
                if persist, store != nil, !outcome.isEmpty {
                    let d = Self.delta(outcome, next, at: now())
                    if !d.isEmpty {
                        if isLayout {
                            do {
                                try store!.persist(d)
                            } catch {
                                return .failure(.internal("could not save the change: \(error)"))
                            }
                        } else {
                            delta = d
                            delta!.fromDriver = Self.isDriverChange(change)
                        }
                    }
                }
                inner.state = next
            }
            guard !outcome.isEmpty else { return .success((outcome, [], delta)) }
            return .success((outcome, Self.deliveries(of: change, outcome, before: before, inner: &inner, core: self), delta))
        }
        switch result {
        case .failure(let error):
            throw error
        case .success(let (outcome, deliveries, delta)):
            for d in deliveries { d() }
            if let delta, let store {
                do {
                    try store.persist(delta)
                } catch {
                    logger.error("could not save the device registry", metadata: ["error": "\(error)"])
                }
            }
            if !outcome.rejected.isEmpty { logRejections(outcome, change) }
            return outcome
        }
    }

    /// What every observer concerned is to be handed for an applied change (called under the
    /// lock, in version order; run after it).
    static func deliveries(
        of change: HomeChange, _ outcome: HomeOutcome, before: HomeState?, inner: inout Inner, core: HomeCore
    ) -> [@Sendable () -> Void] {
        guard inner.tap != nil || !inner.observers.isEmpty || !inner.updateObservers.isEmpty
            || !inner.eventObservers.isEmpty || !inner.auditObservers.isEmpty
        else { return [] }
        let after = inner.state
        var deliveries: [@Sendable () -> Void] = []
        if let tap = inner.tap, !tap.skip(version: outcome.version, origin: outcome.origin),
            let waiter = tap.offer(tapped(change, outcome, after, catalog: inner.catalog, at: .now))
        {
            deliveries.append { waiter.resume() }
        }
        let shape = outcome.structuresChanged || outcome.roomsChanged
            || outcome.devices.contains { $0.1 != .attributes }
        if shape {
            for o in inner.observers.values where o.device == nil {
                if let d = o.onChange(before, after, outcome) { deliveries.append(d) }
            }
        }
        if !inner.deviceObservers.isEmpty {
            for (id, _) in outcome.devices {
                guard let ids = inner.deviceObservers[id] else { continue }
                var views = DeviceViews(after.devices[id], core: core, catalog: inner.catalog)
                deliveries.reserveCapacity(deliveries.count + ids.count)
                for oid in ids {
                    guard let o = inner.observers[oid] else { continue }
                    let delivery: (@Sendable () -> Void)?
                    if let onDevice = o.onDevice {
                        delivery = onDevice(&views, after.version)
                    } else {
                        delivery = o.onChange(before, after, outcome)
                    }
                    if let delivery { deliveries.append(delivery) }
                }
            }
        }
        if !outcome.devices.isEmpty {
            for o in inner.updateObservers.values {
                if let d = o.onChange(before, after, outcome) { deliveries.append(d) }
            }
        }
        if !outcome.events.isEmpty {
            for o in inner.eventObservers.values {
                if let d = o.onChange(before, after, outcome) { deliveries.append(d) }
            }
        }
        for o in inner.auditObservers.values {
            if let d = o.onChange(before, after, outcome) { deliveries.append(d) }
        }
        return deliveries
    }

    /// Whether an in-place change (report, event, connectivity) can have anything to save:
    /// a device whose shape changed (its registry row), or an output's On/Off value. Reports of
    /// other attributes only changed values the registry does not keep, so no delta is built.
    static func mayNeedSaving(_ change: HomeChange, _ outcome: HomeOutcome) -> Bool {
        guard case .report(_, let reports, _) = change else { return true }
        if outcome.devices.contains(where: { $0.1 != .attributes }) { return true }
        return reports.contains { $0.trait == OnOffTrait.identifier }
    }

    /// Whether a change came from a driver (``LayoutDelta/fromDriver``).
    static func isDriverChange(_ change: HomeChange) -> Bool {
        switch change {
        case .publish, .remove, .report, .event, .connectivity, .traitConnectivity: true
        case .layout, .layoutEdits, .restore: false
        }
    }

    static func delta(_ outcome: HomeOutcome, _ state: HomeState, at: UInt64 = 0) -> LayoutDelta {
        var upserted: [DeviceSnapshot] = []
        var removed: [DeviceID] = []
        var outputs: [DeviceID: Bool] = [:]
        for (id, kind) in outcome.devices {
            if kind != .removed, let d = state.devices[id], let on = d.onOffValue { outputs[id] = on }
            switch kind {
            case .attributes: continue
            case .removed: removed.append(id)
            case .added, .shape: if let d = state.devices[id] { upserted.append(d) }
            }
        }
        return LayoutDelta(
            structures: outcome.structuresChanged ? Array(state.structures.values) : nil,
            rooms: outcome.roomsChanged ? Array(state.rooms.values) : nil,
            upserted: upserted, removed: removed, version: outcome.version, outputStates: outputs, at: at)
    }

    func logRejections(_ outcome: HomeOutcome, _ change: HomeChange) {
        var plugin = "core"
        switch change {
        case .publish(let p, _), .remove(let p, _), .report(let p, _, _), .event(let p, _, _), .connectivity(let p, _, _),
            .traitConnectivity(let p, _, _, _, _):
            plugin = p
        default: break
        }
        metrics.rejected(plugin: plugin).increment(by: outcome.rejected.count)
        let fresh: [(DeviceID?, String)] = rejections.withLock { r in
            r.count += outcome.rejected.count
            return outcome.rejected.compactMap { item in
                let key = "\(item.device?.rawValue ?? "-")|\(item.key)|\(item.message)"
                return r.logged.insert(key).inserted ? (item.device, item.message) : nil
            }
        }
        for (device, message) in fresh {
            logger.warning(
                "refused input: \(message) (logged once; later repeats are only counted)",
                metadata: ["plugin": "\(plugin)", "device": "\(device?.rawValue ?? "-")"])
        }
    }

    /// How many reports, events or descriptions the core has refused as malformed.
    public var rejectedInputCount: Int { rejections.withLock { $0.count } }

    // MARK: - Drivers

    /// The context a plugin reports through.
    public func context(for pluginID: String, configuration: PluginConfiguration = PluginConfiguration()) -> any DriverContext {
        CoreDriverContext(core: self, pluginID: pluginID, configuration: configuration)
    }

    /// Registers (or, with nil, removes) the handler for a plugin's commands.
    public func setCommandHandler(_ handler: (any CommandHandler)?, for pluginID: String) {
        inner.withLock { $0.handlers[pluginID] = handler }
    }

    // MARK: - Observers

    /// Registers an observer; `seed` is handed the state under the same lock, so it sees exactly
    /// what the observer's first change starts from.
    func register(
        _ observer: Observer, events: Bool = false, audit: Bool = false, updates: Bool = false,
        seed: ((HomeState) -> Void)? = nil
    ) -> Int? {
        inner.withLock { inner -> Int? in
            if let s = observer.session, inner.revoked.contains(s) { return nil }
            inner.nextID += 1
            let id = inner.nextID
            seed?(inner.state)
            if updates {
                inner.updateObservers[id] = observer
            } else if audit {
                inner.auditObservers[id] = observer
            } else if events {
                inner.eventObservers[id] = observer
            } else {
                inner.observers[id] = observer
                if let d = observer.device { inner.deviceObservers[d, default: []].insert(id) }
            }
            metrics.subscribers.increment()
            return id
        }
    }

    func unregister(_ id: Int) {
        let removed = inner.withLock { inner -> Bool in
            let observer = inner.observers.removeValue(forKey: id)
            if let d = observer?.device {
                inner.deviceObservers[d]?.remove(id)
                if inner.deviceObservers[d]?.isEmpty == true { inner.deviceObservers[d] = nil }
            }
            let event = inner.eventObservers.removeValue(forKey: id)
            let audit = inner.auditObservers.removeValue(forKey: id)
            let update = inner.updateObservers.removeValue(forKey: id)
            return observer != nil || event != nil || audit != nil || update != nil
        }
        if removed { metrics.subscribers.decrement() }
    }

    /// How many observers are registered (subscriptions not yet ended).
    public var observerCount: Int {
        inner.withLock { $0.observers.count + $0.eventObservers.count + $0.auditObservers.count + $0.updateObservers.count }
    }

    /// Ends every subscription of a session and refuses its later calls (`permissionDenied`).
    public func revoke(session: String) {
        let finishers: [@Sendable () -> Void] = inner.withLock { inner in
            inner.revoked.insert(session)
            return (inner.observers.values.filter { $0.session == session }
                + inner.eventObservers.values.filter { $0.session == session }
                + inner.auditObservers.values.filter { $0.session == session }
                + inner.updateObservers.values.filter { $0.session == session }).map(\.finish)
        }
        for f in finishers { f() }
    }

    /// Whether `principal`'s operations are checked against the catalogue before they reach a
    /// driver: the app's own choice (``GrantScope/strictOperationValidation``), else the daemon's.
    public func isStrict(for principal: Principal) -> Bool {
        scoped(principal).scope?.strictOperationValidation ?? strictOperationValidation
    }

    /// `principal` with its session's current scope (an admin may have changed the grant).
    func scoped(_ principal: Principal) -> Principal {
        guard principal.scope != nil, let session = principal.sessionID,
            let scope = scopeOverrides.withLock({ $0[session] })
        else { return principal }
        return Principal(id: principal.id, role: principal.role, scope: scope, sessionID: session)
    }

    /// An app's grant changed (an admin edited it, or approved the app's permissions update):
    /// the session's open subscriptions follow at once — devices leaving the scope vanish from
    /// `batched()` sets, `stream()` gets a fresh snapshot, a `device(id:)` subscription to a
    /// device now hidden ends — and its next calls see the new scope. No reconnect.
    public func updateScope(session: String, to scope: GrantScope) {
        scopeOverrides.withLock { $0[session] = scope }
        let refreshers = inner.withLock { inner in
            (inner.observers.values.filter { $0.session == session }
                + inner.updateObservers.values.filter { $0.session == session }).compactMap(\.refresh)
        }
        for r in refreshers { r() }
    }

    func isRevoked(_ principal: Principal) -> Bool {
        guard let s = principal.sessionID else { return false }
        return inner.withLock { $0.revoked.contains(s) }
    }

    func handler(for pluginID: String) -> (any CommandHandler)? { inner.withLock { $0.handlers[pluginID] } }
}

/// The ``DriverContext`` the core gives a plugin: each call becomes one change.
final class CoreDriverContext: DriverContext {
    let core: HomeCore
    let pluginID: String
    let configuration: PluginConfiguration
    let reports: Counter
    let events: Counter
    /// The plugin's own counters by the name it uses; nil for a name that cannot be a metric
    /// (logged once, when first asked for).
    let pluginCounters = Mutex<[String: Counter?]>([:])

    init(core: HomeCore, pluginID: String, configuration: PluginConfiguration) {
        self.core = core
        self.pluginID = pluginID
        self.configuration = configuration
        reports = core.metrics.reports(plugin: pluginID)
        events = core.metrics.events(plugin: pluginID)
    }

    func publish(_ device: DeviceDescription) { _ = try? core.apply(.publish(plugin: pluginID, device)) }
    func remove(device localID: String) { _ = try? core.apply(.remove(plugin: pluginID, localID: localID)) }
    func report(_ reports: [AttributeReport]) {
        self.reports.increment(by: reports.count)
        _ = try? core.apply(.report(plugin: pluginID, reports, at: core.now()))
    }
    func emit(_ event: EventReport) {
        events.increment()
        _ = try? core.apply(.event(plugin: pluginID, event, at: core.now()))
    }
    func count(_ name: String, by amount: Int) {
        let (counter, isNew) = pluginCounters.withLock { counters -> (Counter?, Bool) in
            if let known = counters[name] { return (known, false) }
            let made = core.metrics.pluginCounter(plugin: pluginID, name: name)
            counters[name] = made
            return (made, true)
        }
        if let counter {
            counter.increment(by: max(0, amount))
        } else if isNew {
            core.logger.warning(
                "plugin counter '\(name)' refused: not a usable metric name (or one the core uses); it is not counted",
                metadata: ["plugin": "\(pluginID)"])
        }
    }
    func setConnectivity(_ state: ConnectivityState, device localID: String?) {
        _ = try? core.apply(.connectivity(plugin: pluginID, localID: localID, state))
    }
    func setConnectivity(_ state: ConnectivityState, device localID: String, trait: TraitID, deviceType: DeviceTypeID?) {
        _ = try? core.apply(.traitConnectivity(plugin: pluginID, localID: localID, deviceType: deviceType, trait: trait, state))
    }
    func log(_ level: LogLevel, _ message: String, device localID: String?) {
        var metadata: Logger.Metadata = ["plugin": "\(pluginID)"]
        if let localID { metadata["device"] = "\(DeviceID(plugin: pluginID, local: localID))" }
        core.logger.log(level: Logger.Level(level), "\(message)", metadata: metadata)
    }
}

extension Logger.Level {
    init(_ level: LogLevel) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
