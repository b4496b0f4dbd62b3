public import HomeCore
public import HomeModel
public import Foundation
public import Logging
import HashTreeCollections

/// An automation error: a code, a message, and — for validation — every issue found.
public struct AutomationError: Error, Sendable, CustomStringConvertible {
    public let code: HomeError.Code
    public let message: String
    public let issues: [AutomationIssue]

    public init(_ code: HomeError.Code, _ message: String, issues: [AutomationIssue] = []) {
        self.code = code
        self.message = message
        self.issues = issues
    }

    init(_ error: HomeError) { self.init(error.code, error.message) }

    public var description: String {
        ([message] + issues.map { "  \($0.severity.rawValue): \($0)" }).joined(separator: "\n")
    }

    public var homeError: HomeError { HomeError(code, description) }
}

/// An automation as the engine holds it: the definition and its life (state, revision, counts).
public struct AutomationRecord: Hashable, Sendable {
    public var automation: Automation
    /// `enabled`, `disabled` or `suspended`.
    public var state: String
    public var suspendedReason: String?
    public var revision: Int
    public var executionCount: Int
    public var source: String
    public var configRef: String?
    public var owner: String
    /// Warnings from the last validation.
    public var issues: [AutomationIssue]
}

/// The automation engine: reads every accepted change from the core's lossless tap, matches
/// starters, checks conditions, runs actions through `Home` as the automation, keeps traces.
///
/// Run it as a service (`run()` until cancelled). Durable timers (delays, `for` holds,
/// schedules) are rows with absolute due times in the ``AutomationStore``.
public actor AutomationEngine {
    public let core: HomeCore
    public let scenes: SceneBook?
    let store: (any AutomationStore)?
    let clock: any AutomationClock
    public let timeZone: TimeZone
    /// Where the home is (sun starters); nil: sun starters do not fire.
    public let location: SolarLocation?
    /// Where `publish` and `webhook` actions go.
    let outbound: (any AutomationOutbound)?
    let logger: Logger
    public nonisolated let tap: ChangeTap

    var records: [String: AutomationRecord] = [:] {
        didSet { refreshTapIdle() }
    }
    /// Each automation's name as ``NamingRules/normalised(_:)`` gives it, by id, with the name it
    /// was worked out from (normalising is Unicode work: saving the thousandth automation would
    /// otherwise normalise the 999 names before it).
    var normalisedNames: [String: (name: String, normalised: String)] = [:]
    var compiled: [String: CompiledAutomation] = [:]
    var starterStates: [String: [Int: StarterState]] = [:]
    /// Dispatch: which starters look at an attribute, an event, a device's connectivity.
    var attributeIndex: [AttributeKey: [(String, Int)]] = [:]
    var eventIndex: [EventKey: [(String, Int)]] = [:]
    var connectivityIndex: [DeviceID: [(String, Int)]] = [:]
    /// The index keys each automation's starters sit under, so taking one out touches only
    /// those (a save costs O(its starters), not O(every starter)).
    var indexedKeys: [String: IndexedKeys] = [:]
    var traces: [String: [RunTrace]] = [:]
    var running: [String: [String: Task<Void, Never>]] = [:] {
        didSet { refreshTapIdle() }
    }
    var queued: [String: [(RunTrace.Cause, Int)]] = [:]
    var lastStart: [String: Date] = [:]
    var recentStarts: [String: [Date]] = [:]
    var scheduleTasks: [String: Task<Void, Never>] = [:]
    /// Devices an automation's run commanded recently, with the run's loop depth.
    var recentCommands: [DeviceID: (depth: Int, at: Date)] = [:]
    var changeWaiters: [UUID: CheckedContinuation<Void, Never>] = [:] {
        didSet { refreshTapIdle() }
    }
    var cancelledWaiters: Set<UUID> = []
    var traceWaiters: [UUID: (@Sendable ([String: [RunTrace]]) -> Bool, CheckedContinuation<Void, Never>)] = [:]
    var versionWaiters: [(UInt64, CheckedContinuation<Void, Never>)] = [] {
        didSet { refreshTapIdle() }
    }
    /// The newest core version the engine has processed.
    public internal(set) var processedVersion: UInt64 = 0
    var notificationContinuations: [UUID: AsyncStream<String>.Continuation] = [:]
    var nextRun = 0
    var seededVersion: UInt64 = 0
    /// Changes the tap dropped (never silent): counted here, traced on every automation.
    public internal(set) var droppedChanges: UInt64 = 0
    var started = false
    var stopping = false
    /// What the tap was last told (``refreshTapIdle()``).
    var tapIdle = false
    /// Finished traces not written yet, by run ID (``flushTraces()``).
    var pendingTraces: [String: RunTrace] = [:]
    var pendingOrder: [String] = []
    var traceCommit: Task<Void, Never>?
    /// Config automations waiting for devices no plugin has reported yet, by ID, with where
    /// they are defined (``loadConfigured(_:refs:pending:)``).
    var pendingConfig: [String: (automation: Automation, ref: String?)] = [:] {
        didSet { refreshTapIdle() }
    }
    /// Config scenes waiting for their devices, by ID (loaded into ``scenes`` when they appear).
    var pendingScenes: [String: AutomationConfig.PendingScene] = [:] {
        didSet { refreshTapIdle() }
    }
    /// An app grant's current scope by grant ID (``setGrantLookup(_:)``).
    var grantLookup: (@Sendable (String) -> GrantScope?)?
    /// What ``reload(as:)`` runs (set by hearthd).
    var configReloader: (@Sendable () async -> ConfigReload.Outcome)?
    /// Every device each compiled automation uses (starters, conditions, actions), for
    /// ``revalidate(_:)`` when the layout changes.
    var usedDevices: [String: Set<DeviceID>] = [:]
    /// Live trace subscribers (``liveRuns(of:as:)``).
    var runSubscribers: [UUID: RunSubscriber] = [:]

    public static let traceLimit = 50
    static let maxDepth = 8

    /// When one automation starting again and again counts as a loop: more than `starts` starts
    /// within `seconds` suspends it (`loopDetected`). hearthd uses ``standard``; a benchmark that
    /// presses a button a thousand times in a row raises it.
    public struct LoopGuard: Sendable {
        public let starts: Int
        public let seconds: Double
        public init(starts: Int, seconds: Double) {
            self.starts = starts
            self.seconds = seconds
        }
        public static let standard = LoopGuard(starts: 20, seconds: 10)
    }
    let loopGuard: LoopGuard

    struct EventKey: Hashable {
        let device: DeviceID
        let trait: TraitID
        let event: EventID
    }

    struct IndexedKeys {
        var attributes: Set<AttributeKey> = []
        var events: Set<EventKey> = []
        var devices: Set<DeviceID> = []
    }

    struct StarterState {
        var active = false
        var last: Value?
        var hold: Task<Void, Never>?
        var holdTimer: String?
    }

    public init(
        core: HomeCore, scenes: SceneBook? = nil, store: (any AutomationStore)? = nil, clock: any AutomationClock = SystemAutomationClock(),
        timeZone: TimeZone = .current, tapCapacity: Int = 10_000, logger: Logger = Logger(label: "hearth.automations"),
        location: SolarLocation? = nil, outbound: (any AutomationOutbound)? = nil, loopGuard: LoopGuard = .standard
    ) {
        self.loopGuard = loopGuard
        self.location = location
        self.outbound = outbound
        self.core = core
        self.scenes = scenes
        self.store = store
        self.clock = clock
        self.timeZone = timeZone
        self.logger = logger
        self.tap = ChangeTap(capacity: tapCapacity)
    }

    // MARK: - Service

    /// Loads stored automations and timers, installs the tap, fires start-up starters, then
    /// reads changes until cancelled.
    public func run() async {
        start()
        let tap = self.tap
        await withTaskCancellationHandler {
            while let batch = await tap.next() {
                self.process(batch.changes, dropped: batch.dropped, newestDroppedVersion: batch.newestDroppedVersion)
            }
        } onCancel: {
            tap.close()
        }
        stop()
    }

    /// Loads what the store holds and installs the tap (``run()`` calls it; tests may call it
    /// and feed changes themselves).
    public func start() {
        guard !started else { return }
        started = true
        var seed: HomeState?
        core.installTap(tap) { seed = $0 }
        seededVersion = seed?.version ?? 0
        processedVersion = seededVersion
        if let store {
            do {
                // Timers first: installing an automation plans its next schedule (a new row).
                let timers = try store.loadTimers()
                for s in try store.loadAutomations() {
                    guard let a = try? JSONDecoder().decode(Automation.self, from: Data(s.graphJSON.utf8)) else {
                        logger.error("stored automation \(s.id) cannot be read by this build; left as is")
                        continue
                    }
                    let record = AutomationRecord(
                        automation: a, state: s.state, suspendedReason: s.suspendedReason, revision: s.revision,
                        executionCount: s.executionCount, source: s.source, configRef: s.configRef, owner: s.owner, issues: [])
                    install(record)
                }
                loadTraces()
                restoreTimers(timers)
            } catch {
                logger.error("automations could not be loaded: \(error)")
            }
        }
        // Devices reported before the tap was installed may be what a pending one waits for.
        retryPending()
        for id in records.keys.sorted() { startupStarters(id) }
        refreshTapIdle()
    }

    func stop() {
        stopping = true
        core.installTap(nil)
        for (_, runs) in running { for t in runs.values { t.cancel() } }
        for t in scheduleTasks.values { t.cancel() }
        for (_, states) in starterStates { for s in states.values { s.hold?.cancel() } }
        for c in changeWaiters.values { c.resume() }
        changeWaiters = [:]
        for c in notificationContinuations.values { c.finish() }
        endAllRunSubscriptions()
        flushAllTraces()
    }

    /// Lines from `notify` and `log` actions and alarms (loop detected, changes dropped).
    public func notifications() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(100))
        let id = UUID()
        notificationContinuations[id] = continuation
        continuation.onTermination = { _ in Task { await self.dropNotification(id) } }
        return stream
    }

    func dropNotification(_ id: UUID) { notificationContinuations[id] = nil }

    func notify(_ line: String) {
        logger.notice("\(line)")
        for c in notificationContinuations.values { c.yield(line) }
    }

    /// The automation whose normalised name is `normalised`, if any.
    func automationNamed(_ normalised: String) -> AutomationRecord? {
        var found: AutomationRecord?
        for (id, r) in records {
            let name = r.automation.name
            let n: String
            if let cached = normalisedNames[id], cached.name == name {
                n = cached.normalised
            } else {
                n = NamingRules.normalised(name)
                normalisedNames[id] = (name, n)
            }
            if n == normalised { found = r }
        }
        for id in normalisedNames.keys where records[id] == nil { normalisedNames[id] = nil }
        return found
    }

    // MARK: - Loading

    func compiler() -> AutomationCompiler {
        let sceneIDs = Set(((try? scenes?.list(as: .system)) ?? []).map(\.id))
        var autos: [String: Bool] = [:]
        for (id, c) in compiled { autos[id] = c.hasManualStarter }
        for (id, r) in records where autos[id] == nil { autos[id] = r.automation.starters.contains { $0.kind == .manual } }
        var compiler = AutomationCompiler(catalog: core.catalog, state: core.state, scenes: sceneIDs, automations: autos)
        compiler.location = location
        compiler.checksLocation = true
        compiler.timeZone = timeZone
        return compiler
    }

    /// Puts a record in place: compiles it (an automation that no longer compiles stays listed,
    /// inert, with its issues), indexes its starters, seeds their state, plans its schedules.
    func install(_ record: AutomationRecord, quiet: Bool = false) {
        var record = record
        uninstall(record.automation.id)
        let (c, issues) = compiler().compile(record.automation)
        record.issues = issues
        records[record.automation.id] = record
        guard let c else {
            if !quiet { logger.warning("automation \(record.automation.id) is inert: \(issues.first?.description ?? "")") }
            return
        }
        compiled[record.automation.id] = c
        usedDevices[record.automation.id] = Self.devices(of: c)
        let state = core.state
        var states: [Int: StarterState] = [:]
        var keys = IndexedKeys()
        defer { indexedKeys[record.automation.id] = keys }
        for s in c.starters {
            switch s.kind {
            case .attribute(let key, let type, let predicate, _):
                attributeIndex[key, default: []].append((record.automation.id, s.index))
                keys.attributes.insert(key)
                let value = Self.value(state, key, type)
                var st = StarterState(last: value)
                if let value { st.active = Self.holds(predicate, value, wasActive: false, old: nil) }
                states[s.index] = st
            case .event(let d, let t, let e, _):
                eventIndex[EventKey(device: d, trait: t, event: e), default: []].append((record.automation.id, s.index))
                keys.events.insert(EventKey(device: d, trait: t, event: e))
            case .connectivity(let d, let to, _):
                connectivityIndex[d, default: []].append((record.automation.id, s.index))
                keys.devices.insert(d)
                let now = state.devices[d]?.sourceConnectivity.connectivityState
                states[s.index] = StarterState(active: now == to, last: now.map { .string($0.rawValue) })
            default: break
            }
        }
        starterStates[record.automation.id] = states
        if record.state == "enabled" { planSchedules(record.automation.id) }
    }

    func uninstall(_ id: String) {
        compiled[id] = nil
        usedDevices[id] = nil
        if let keys = indexedKeys.removeValue(forKey: id) {
            for k in keys.attributes {
                attributeIndex[k]?.removeAll { $0.0 == id }
                if attributeIndex[k]?.isEmpty == true { attributeIndex[k] = nil }
            }
            for k in keys.events {
                eventIndex[k]?.removeAll { $0.0 == id }
                if eventIndex[k]?.isEmpty == true { eventIndex[k] = nil }
            }
            for k in keys.devices {
                connectivityIndex[k]?.removeAll { $0.0 == id }
                if connectivityIndex[k]?.isEmpty == true { connectivityIndex[k] = nil }
            }
        }
        if let states = starterStates[id] { for s in states.values { s.hold?.cancel() } }
        starterStates[id] = nil
        for (key, t) in scheduleTasks where key.hasPrefix(id + "|") {
            t.cancel()
            scheduleTasks[key] = nil
        }
    }

    static func value(_ state: HomeState, _ key: AttributeKey, _ type: DeviceTypeID?) -> Value? {
        guard let d = state.devices[key.device] else { return nil }
        for t in d.types where type == nil || t.id == type {
            if let v = t.traits[key.trait]?.attributes[key.attribute] { return v }
        }
        return nil
    }

    /// Whether a predicate's state holds for `value` (thresholds keep their state inside the band).
    static func holds(_ p: Predicate, _ value: Value, wasActive: Bool, old: Value?) -> Bool {
        switch p {
        case .changes: return false
        case .equals(let to, _): return to.map { same(value, $0) } ?? false
        case .above(let limit, let h):
            guard let v = value.doubleValue else { return false }
            return wasActive ? v > limit - h : v > limit
        case .below(let limit, let h):
            guard let v = value.doubleValue else { return false }
            return wasActive ? v < limit + h : v < limit
        }
    }

    static func same(_ a: Value, _ b: Value) -> Bool {
        if a == b { return true }
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        return false
    }

    // MARK: - Saving (admins)

    func persist(_ record: AutomationRecord) throws(AutomationError) {
        guard let store else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(record.automation) else { throw AutomationError(.internal, "could not encode \(record.automation.id)") }
        do {
            try store.saveAutomation(
                StoredAutomation(
                    id: record.automation.id, name: record.automation.name, state: record.state, suspendedReason: record.suspendedReason,
                    graphJSON: String(decoding: data, as: UTF8.self), executionCount: record.executionCount, owner: record.owner,
                    source: record.source, configRef: record.configRef, revision: record.revision))
        } catch {
            throw AutomationError(error)
        }
    }

    func requireAdmin(_ principal: Principal, _ what: String) throws(AutomationError) {
        do { try core.checkSessionPublic(principal) } catch { throw AutomationError(error) }
        guard principal.role == .admin else {
            throw AutomationError(.permissionDenied, "\(principal) is a \(principal.role.rawValue); only an admin can \(what)")
        }
    }

    /// Every problem with an automation, saving nothing.
    public func validate(_ automation: Automation) -> [AutomationIssue] {
        compiler().validate(automation)
    }

    /// Creates or replaces an automation (admins). Blocking issues refuse it with every issue;
    /// `ifRevision` must match the stored revision for a replacement (`conflict` otherwise).
    @discardableResult
    public func save(_ automation: Automation, ifRevision: Int? = nil, as principal: Principal) throws(AutomationError) -> AutomationRecord {
        if principal.role == .app {
            do { try core.checkSessionPublic(principal) } catch { throw AutomationError(error) }
            guard principal.scope?.canAutomate == true else {
                throw AutomationError(.permissionDenied, "this app's grant does not let it automate (it has no automation types, or may not control)")
            }
        } else {
            try requireAdmin(principal, "create or edit automations")
        }
        if let allow = automation.allowSensitive, allow, principal.role != .admin {
            throw AutomationError(.permissionDenied, "only an admin may set allowSensitive")
        }
        let old = records[automation.id]
        if let old, principal.role == .app, old.owner != Self.owner(of: principal) {
            throw AutomationError(.conflict, "the id '\(automation.id)' is taken")
        }
        if let old, old.source == "config" {
            throw AutomationError(.permissionDenied, "automation '\(automation.id)' is defined in \(old.configRef ?? "hearth.yaml"); edit it there")
        }
        if let ifRevision, ifRevision != (old?.revision ?? 0) {
            throw AutomationError(.conflict, "automation '\(automation.id)' is at revision \(old?.revision ?? 0), not \(ifRevision)")
        }
        if old == nil, let taken = automationNamed(NamingRules.normalised(automation.name)) {
            throw AutomationError(.conflict, "the name '\(automation.name)' is taken by automation '\(taken.automation.id)'",
                issues: [AutomationIssue(.error, "nameTaken", "name", "another automation is called '\(automation.name)'")])
        }
        let issues = validate(automation)
        let errors = issues.filter { $0.severity == .error }
        if !errors.isEmpty {
            throw AutomationError(
                .invalidArgument, "automation '\(automation.id)' has \(errors.count) error(s) and \(issues.count - errors.count) warning(s)",
                issues: issues)
        }
        if principal.role == .app, let scope = principal.scope {
            let denied = outOfScope(automation, scope: scope)
            if !denied.isEmpty {
                throw AutomationError(
                    .permissionDenied, "automation '\(automation.id)' uses \(denied.count) thing(s) this app may not automate", issues: denied)
            }
        }
        let record = AutomationRecord(
            automation: automation, state: automation.isEnabled ? "enabled" : "disabled", suspendedReason: nil,
            revision: (old?.revision ?? 0) + 1, executionCount: old?.executionCount ?? 0, source: "api", configRef: nil,
            owner: principal.role == .app ? Self.owner(of: principal) : (old?.owner ?? "home"), issues: issues)
        try persist(record)
        install(record)
        return records[automation.id]!
    }

    /// Replaces the config-owned automations (start-up, reload). Broken ones are not loaded;
    /// their issues come back (hearthd prints them with file and line). `pending` are those
    /// that name devices no plugin has reported yet ([AutomationConfig.pending]): each is
    /// loaded as soon as a device change makes it compile (``retryPending()``), and refused
    /// (logged) if it then has other errors; a reload replaces the pending set.
    ///
    /// `pendingScenes` are config scenes waiting the same way (``AutomationConfig/pendingScenes``);
    /// an automation that recalls or tests one of them waits with it.
    @discardableResult
    public func loadConfigured(
        _ list: [Automation], refs: [String: String] = [:], pending: [Automation] = [], pendingScenes: [AutomationConfig.PendingScene] = []
    ) -> [String: [AutomationIssue]] {
        var problems: [String: [AutomationIssue]] = [:]
        pendingConfig = [:]
        self.pendingScenes = [:]
        for s in pendingScenes { self.pendingScenes[s.id] = s }
        for a in pending { pendingConfig[a.id] = (a, refs[a.id]) }
        let keep = Set(list.map(\.id))
        for (id, r) in records where r.source == "config" && !keep.contains(id) {
            uninstall(id)
            records[id] = nil
            try? store?.deleteAutomation(id: id)
        }
        for a in list {
            let issues = validate(a)
            let errors = issues.filter { $0.severity == .error }
            if !errors.isEmpty, waitsOnly(errors) {
                pendingConfig[a.id] = (a, refs[a.id])
                continue
            }
            if !errors.isEmpty {
                problems[a.id] = issues
                continue
            }
            if !issues.isEmpty { problems[a.id] = issues }
            installConfigured(a, ref: refs[a.id], issues: issues)
        }
        // Pending ones may already compile (their devices were restored from the database).
        retryPending()
        return problems
    }

    func installConfigured(_ a: Automation, ref: String?, issues: [AutomationIssue]) {
        let old = records[a.id]
        let record = AutomationRecord(
            automation: a, state: old?.state == "suspended" ? "suspended" : (a.isEnabled ? "enabled" : "disabled"),
            suspendedReason: old?.suspendedReason, revision: (old?.revision ?? 0) + (old?.automation == a ? 0 : 1),
            executionCount: old?.executionCount ?? 0, source: "config", configRef: ref, owner: "home", issues: issues)
        try? persist(record)
        install(record)
    }

    /// The config automations still waiting for their devices: ID → where they are defined.
    public var pendingConfigured: [String: String] { pendingConfig.mapValues { $0.ref ?? "hearth.yaml" } }

    /// The config scenes still waiting for their devices: ID → where they are defined.
    public var pendingConfiguredScenes: [String: String] { pendingScenes.mapValues(\.ref) }

    /// Whether these errors only say that devices (or pending scenes) are not there yet.
    func waitsOnly(_ errors: [AutomationIssue]) -> Bool {
        errors.allSatisfy { e in
            AutomationIssue.missingDeviceCodes.contains(e.code)
                || (e.code == "unknownScene" && pendingScenes.keys.contains { e.message == "no scene '\($0)'" })
        }
    }

    /// Tries each pending config automation again (a device appeared or changed): one that now
    /// compiles is loaded; one still missing only devices waits; one with other errors is
    /// refused for good (logged with where it is defined).
    func retryPending() {
        // Scenes first: a pending automation may recall one.
        for (id, entry) in pendingScenes.sorted(by: { $0.key < $1.key }) {
            do throws(AutomationConfig.ConfigProblem) {
                var scene = try AutomationConfig.resolveScene(entry.value, path: entry.path, state: core.state, catalog: core.catalog)
                scene.configRef = entry.ref
                pendingScenes[id] = nil
                do throws(HomeError) {
                    try scenes?.addConfigured(scene)
                    logger.notice("\(entry.ref): scenes: \(id): its devices appeared; loaded")
                } catch {
                    logger.error("\(entry.ref): scenes: \(id): its devices appeared but it is refused (not loaded): \(error.message)")
                }
            } catch where error.missingDevices.isEmpty {
                pendingScenes[id] = nil
                logger.error("\(entry.ref): scenes: \(id): its devices appeared but it does not resolve (not loaded): \(error.path): \(error.message)")
            } catch {
                continue  // still waiting
            }
        }
        guard !pendingConfig.isEmpty else { return }
        for (id, entry) in pendingConfig.sorted(by: { $0.key < $1.key }) {
            let issues = validate(entry.automation)
            let errors = issues.filter { $0.severity == .error }
            if errors.isEmpty {
                pendingConfig[id] = nil
                installConfigured(entry.automation, ref: entry.ref, issues: issues)
                logger.notice("\(entry.ref ?? "hearth.yaml"): automations: \(id): its devices appeared; loaded")
            } else if !waitsOnly(errors) {
                pendingConfig[id] = nil
                let why = errors.map(\.description).joined(separator: "; ")
                logger.error("\(entry.ref ?? "hearth.yaml"): automations: \(id): its devices appeared but it does not compile (not loaded): \(why)")
            }
        }
    }

    public func delete(_ id: String, ifRevision: Int? = nil, as principal: Principal) throws(AutomationError) {
        guard let r = records[id] else { throw AutomationError(.notFound, "no automation '\(id)'") }
        try requireManage(r, principal, "delete automations")
        if r.source == "config" { throw AutomationError(.permissionDenied, "automation '\(id)' is defined in \(r.configRef ?? "hearth.yaml"); remove it there") }
        if let ifRevision, ifRevision != r.revision { throw AutomationError(.conflict, "automation '\(id)' is at revision \(r.revision), not \(ifRevision)") }
        do { try store?.deleteAutomation(id: id) } catch { throw AutomationError(error) }
        if let runs = running[id] { for t in runs.values { t.cancel() } }
        uninstall(id)
        records[id] = nil
        endRunSubscriptions(of: id)
    }

    /// Enables or disables (admins; an app its own). Enabling a suspended automation resumes it.
    public func setEnabled(_ id: String, _ enabled: Bool, as principal: Principal) throws(AutomationError) {
        guard var r = records[id] else { throw AutomationError(.notFound, "no automation '\(id)'") }
        try requireManage(r, principal, enabled ? "enable automations" : "disable automations")
        if principal.role == .app, r.suspendedReason == "grantRevoked" {
            throw AutomationError(.permissionDenied, "automation '\(id)' was suspended when this app's grant was revoked; an admin resumes it")
        }
        r.state = enabled ? "enabled" : "disabled"
        r.suspendedReason = nil
        try persist(r)
        records[id] = r
        uninstall(id)
        install(r)
        if !enabled { if let runs = running[id] { for t in runs.values { t.cancel() } } }
    }

    // MARK: - Reading

    /// Every automation the principal may read (admins and members: all, read-only for members; an app: its own).
    public func list(as principal: Principal) throws(AutomationError) -> [AutomationRecord] {
        do { try core.checkSessionPublic(principal) } catch { throw AutomationError(error) }
        return records.values.filter { Self.readable($0, by: principal) }.sorted { $0.automation.id < $1.automation.id }
    }

    /// Whether `principal` may read the automation and its traces (its session is checked too).
    func mayRead(_ record: AutomationRecord, as principal: Principal) -> Bool {
        guard (try? core.checkSessionPublic(principal)) != nil else { return false }
        return Self.readable(record, by: principal)
    }

    /// Admins and members read every automation; an app its own.
    static func readable(_ record: AutomationRecord, by principal: Principal) -> Bool {
        // An app's automations are owned by its grant (its session): `app:<grant ID>`.
        principal.role != .app || record.owner == "app:\(principal.sessionID ?? principal.id)"
    }

    public func record(_ id: String, as principal: Principal) throws(AutomationError) -> AutomationRecord {
        guard let r = try list(as: principal).first(where: { $0.automation.id == id }) else {
            throw AutomationError(.notFound, "no automation '\(id)'")
        }
        return r
    }

    /// The last runs and near-misses, newest first (at most 50).
    public func runs(_ id: String, as principal: Principal) throws(AutomationError) -> [RunTrace] {
        _ = try record(id, as: principal)
        return (traces[id] ?? []).reversed()
    }

    /// One run's trace, by its ID.
    public func trace(_ runID: String, as principal: Principal) throws(AutomationError) -> RunTrace {
        do { try core.checkSessionPublic(principal) } catch { throw AutomationError(error) }
        guard let t = traces.values.lazy.flatMap({ $0 }).first(where: { $0.id == runID }),
            records[t.automation].map({ Self.readable($0, by: principal) }) ?? (principal.role != .app)
        else {
            throw AutomationError(.notFound, "no run '\(runID)'")
        }
        return t
    }

    /// Whether any run of the automation is going.
    public func isRunning(_ id: String) -> Bool { !(running[id]?.isEmpty ?? true) }
}

