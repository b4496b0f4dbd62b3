import CoreMetrics
public import HomeCore
public import HomeModel
public import Logging
public import ServiceLifecycle
import HashTreeCollections
import Synchronization

/// Publishes the exposed devices as Home Assistant MQTT discovery, and takes commands from the
/// command topics through the core as its own principal (`exposure:mqtt`, whose grant follows
/// the exposure policy). A service: run it in the daemon's `ServiceGroup`.
///
/// ```swift
/// let exporter = MQTTExporter(core: core, settings: exposure, configuration: .init(host: "127.0.0.1", port: 1883, nodeID: "hearth_garage"))
/// try await exporter.run()
/// ```
public final class MQTTExporter: Service, Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var prefix: String
        public var nodeID: String
        public var baseTopic: String
        public var username: String?
        public var password: String?
        public var clientID: String?
        public var keepAlive: Int
        /// Devices of these plugins came from MQTT: not exported unless ``reexportImported``
        /// or listed by ID in the policy (no loops between Hearths).
        public var importPlugins: Set<String>
        public var reexportImported: Bool
        public var softwareVersion: String

        public init(
            host: String = "127.0.0.1", port: Int = 1883, prefix: String = "homeassistant", nodeID: String, baseTopic: String? = nil,
            username: String? = nil, password: String? = nil, clientID: String? = nil, keepAlive: Int = 30,
            importPlugins: Set<String> = ["mqtt"], reexportImported: Bool = false, softwareVersion: String = "1"
        ) {
            self.host = host
            self.port = port
            self.prefix = prefix
            self.nodeID = nodeID
            self.baseTopic = baseTopic ?? "hearth/\(nodeID)"
            self.username = username
            self.password = password
            self.clientID = clientID
            self.keepAlive = keepAlive
            self.importPlugins = importPlugins
            self.reexportImported = reexportImported
            self.softwareVersion = softwareVersion
        }

        public var topics: ExportTopics { ExportTopics(prefix: prefix, nodeID: nodeID, base: baseTopic) }
    }

    public let core: HomeCore
    public let settings: ExposureSettings
    public let configuration: Configuration
    let logger: Logger
    let machine: Mutex<ExportStateMachine>
    let refusedCounter: Counter
    let commandCounter: Counter
    let failures = Atomic<Int>(0)

    public init(core: HomeCore, settings: ExposureSettings, configuration: Configuration, logger: Logger = Logger(label: "hearth.export.mqtt")) {
        self.core = core
        self.settings = settings
        self.configuration = configuration
        self.logger = logger
        machine = Mutex(ExportStateMachine(mapper: ExportMapper(topics: configuration.topics, softwareVersion: configuration.softwareVersion)))
        refusedCounter = Counter(label: "hearth_mqtt_export_refused_total")
        commandCounter = Counter(label: "hearth_mqtt_export_commands_total")
    }

    /// Command payloads refused since start.
    public var refusedCommands: Int { machine.withLock { $0.refusedCount } }
    /// Commands the core or the policy refused (not exposed, read-only grant, device failed).
    public var failedCommands: Int { failures.load(ordering: .relaxed) }
    /// What is exported now.
    public var exportedDevices: [DeviceID] { machine.withLock { $0.exported.keys.sorted() } }

    /// The devices of `set` that leave through this door under `policy`.
    public func selection(_ devices: some Sequence<DeviceSnapshot>, policy: ExposurePolicy) -> [DeviceSnapshot] {
        devices.compactMap { d in
            if configuration.importPlugins.contains(d.pluginID), !configuration.reexportImported, !policy.devices.contains(d.id) {
                return nil
            }
            return policy.view(of: d, catalog: core.catalog)
        }
    }

    public func run() async throws {
        let topics = configuration.topics
        let client: MosquittoClient
        let reached: Bool
        do {
            client = try MosquittoClient(.init(
                host: configuration.host, port: configuration.port, clientID: configuration.clientID ?? "\(configuration.nodeID)-export",
                username: configuration.username, password: configuration.password, keepAlive: configuration.keepAlive,
                will: (topics.bridgeAvailability, "offline")))
            reached = try client.start()
        } catch {
            logger.error("MQTT export cannot start: \(error)")
            throw error
        }
        logger.info("exporting to MQTT", metadata: ["broker": "\(configuration.host):\(configuration.port)", "prefix": "\(configuration.prefix)", "node": "\(configuration.nodeID)"])
        // Until shutdown (or cancellation); then say goodbye: the LWT covers crashes, this
        // covers stops (libmosquitto sends the queued "offline" before the DISCONNECT).
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.readBroker(client) }
                group.addTask { await self.followPolicy(client) }
                if !reached { group.addTask { await self.connectLater(client) } }
            }
        }
        step(client) { $0.stopping() }
        await client.stop()
        client.continuation.finish()
        logger.info("MQTT export stopped")
    }

    /// The broker was down at start: tries again with backoff (1 s, doubling, at most 30 s) until
    /// an attempt gets under way; libmosquitto's thread takes over from there.
    func connectLater(_ client: MosquittoClient) async {
        var delay = Duration.seconds(1)
        while !Task.isCancelled {
            try? await Task.sleep(for: delay)
            if Task.isCancelled { return }
            if client.retry() { return }
            logger.warning("MQTT export: \(configuration.host):\(configuration.port) cannot be reached yet; retrying in \(delay * 2 > .seconds(30) ? .seconds(30) : delay * 2)")
            delay = min(delay * 2, .seconds(30))
        }
    }

    /// Restarts the device subscriptions whenever the policy changes (the principal's grant follows it).
    func followPolicy(_ client: MosquittoClient) async {
        var session: Task<Void, Never>?
        for await policy in settings.updates() {
            if Task.isCancelled { break }
            session?.cancel()
            await session?.value
            session = Task { await self.session(policy: policy, client: client) }
        }
        session?.cancel()
        await session?.value
    }

    /// One policy's export: the whole set once, then one device per change. Two feeds say
    /// which devices changed — ``Query/stream()`` (joined, left, renamed, moved, connectivity;
    /// a fresh snapshot when this reader fell behind) and ``Home/changedDevices()`` (state; it
    /// starts with every device) — and ``refresh(_:policy:client:)`` reads their newest state,
    /// so neither feed can put an older state or shape out after a newer one.
    func session(policy: ExposurePolicy, client: MosquittoClient) async {
        let home = core.home(for: policy.principal(door: "mqtt"))
        // Read only: configs without command topics; every device is re-exported below.
        step(client) { m in
            m.allowControl(policy.allowControl)
            return []
        }
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await change in home.devices().stream() {
                    switch change {
                    case .snapshot: self.refreshAll(policy: policy, client: client)
                    case .added(let d), .updated(let d): self.refresh([d.id], policy: policy, client: client)
                    case .removed(let id): self.refresh([id], policy: policy, client: client)
                    }
                }
            }
            group.addTask {
                for await changed in home.changedDevices() {
                    self.refresh(changed.devices.map(\.id), policy: policy, client: client)
                }
            }
            group.addTask {
                for await event in home.events() {
                    _ = self.step(client) { $0.event(event) }
                }
            }
        }
    }

    /// The devices exported under `policy` in the core's state now (a commissioned device the
    /// policy lets out; the policy is stricter than the grant it makes).
    func exposed(_ id: DeviceID, in state: HomeState, policy: ExposurePolicy) -> DeviceSnapshot? {
        state.commissioned[id].flatMap { selection(CollectionOfOne($0), policy: policy).first }
    }

    /// Publishes what changed for these devices, from their state read under the state
    /// machine's lock (so steps apply states in the core's order). O(1) per device.
    func refresh(_ ids: [DeviceID], policy: ExposurePolicy, client: MosquittoClient) {
        step(client) { m in
            let state = core.state
            return ids.flatMap { m.device($0, exposed($0, in: state, policy: policy)) }
        }
    }

    /// The whole set again (a session's start, or the stream fell behind): devices no longer
    /// exported leave. O(n).
    func refreshAll(policy: ExposurePolicy, client: MosquittoClient) {
        step(client) { m in m.devices(selection(core.state.commissioned.values, policy: policy)) }
    }

    func readBroker(_ client: MosquittoClient) async {
        await withDiscardingTaskGroup { group in
            for await event in client.events {
                switch event {
                case .connected:
                    logger.info("connected to the MQTT broker", metadata: ["broker": "\(configuration.host):\(configuration.port)"])
                    _ = step(client) { $0.connectedToBroker() }
                case .disconnected(let reason):
                    machine.withLock { $0.disconnected() }
                    logger.warning("MQTT export disconnected: \(reason)")
                case .message(let topic, let payload, let retained):
                    let effects = step(client) { $0.message(topic: topic, payload: payload, retained: retained) }
                    // One message's commands (a light's on, then its colour) go in order.
                    let requests = effects.compactMap { if case .invoke(let r) = $0 { r } else { nil } }
                    if !requests.isEmpty {
                        group.addTask {
                            for request in requests {
                                guard await self.invoke(request, topic: topic) else { break }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Sends one command through the core as the exporter; false when it was refused or failed.
    @discardableResult
    func invoke(_ request: CommandRequest, topic: String) async -> Bool {
        let policy = settings.current
        let home = core.home(for: policy.principal(door: "mqtt"))
        // The core enforces the grant; the policy's room and ID rules are checked here.
        guard let device = core.state.devices[request.device], !selection([device], policy: policy).isEmpty else {
            refusedCounter.increment()
            failures.add(1, ordering: .relaxed)
            logger.warning("MQTT command refused", metadata: ["topic": "\(topic)", "reason": "\(request.device) is not exposed"])
            return false
        }
        do {
            _ = try await home.invoke(request)
            commandCounter.increment()
            return true
        } catch {
            refusedCounter.increment()
            failures.add(1, ordering: .relaxed)
            logger.warning("MQTT command failed", metadata: ["topic": "\(topic)", "error": "\((error as? HomeError)?.message ?? "\(error)")"])
            return false
        }
    }

    /// Runs one input through the state machine and carries out its effects. Publishing and
    /// subscribing only enqueue in libmosquitto (nothing calls back into us), so they happen
    /// under the lock: the broker sees them in the state machine's order. Commands are
    /// returned for the caller to send after.
    @discardableResult
    func step(_ client: MosquittoClient, _ body: (inout ExportStateMachine) -> [ExportStateMachine.Effect]) -> [ExportStateMachine.Effect] {
        let effects = machine.withLock { m in
            let effects = body(&m)
            for effect in effects {
                switch effect {
                case .publish(let topic, let payload, let retain): client.publish(topic, payload, retain: retain)
                case .subscribe(let pattern): client.subscribe(pattern)
                case .invoke, .refused: break
                }
            }
            return effects
        }
        for effect in effects {
            switch effect {
            case .publish, .subscribe, .invoke: break
            case .refused(let topic, let reason):
                refusedCounter.increment()
                logger.warning("MQTT command refused", metadata: ["topic": "\(topic.prefix(200))", "reason": "\(reason)"])
            }
        }
        return effects
    }
}
