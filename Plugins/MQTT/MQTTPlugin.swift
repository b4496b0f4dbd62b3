public import DriverAPI
public import HomeModel
import Synchronization

/// The MQTT driver plugin: brings MQTT devices into the home, from Home Assistant discovery
/// messages (zigbee2mqtt, Tasmota, ESPHome, Shelly…) and from explicit mappings in the
/// configuration.
///
/// Discovered devices arrive uncommissioned; explicit mappings with a `name` are commissioned
/// into their `room` on first sight. Commands are published to the entity's command topic
/// (QoS 1) and the state the device reports back updates the home, unless the entity is
/// `optimistic`. A payload that does not parse, or is out of range, is counted and logged once
/// per entity; the last good state stays.
public final class MQTTPlugin: DriverPlugin {
    public let manifest = PluginManifest(
        id: "mqtt", name: "MQTT", version: "0.1.0",
        summary: "MQTT devices through libmosquitto: Home Assistant discovery and explicit mappings")

    /// The running instance (nil between runs).
    let runtime = Mutex<Runtime?>(nil)

    public init() {}

    public func validate(configuration: PluginConfiguration) throws {
        let config = try configuration.decode(MQTTConfiguration.self)
        try config.check(configuration)
    }

    public func run(context: any DriverContext) async throws {
        let config = try context.configuration.decode(MQTTConfiguration.self)
        try config.check(context.configuration)
        var registry = Registry(settings: config.registrySettings)
        var initial: [Registry.Effect] = []
        for (i, device) in (config.devices ?? []).enumerated() {
            initial += registry.add(try device.entity(path: "devices[\(i)]", configuration: context.configuration, catalog: .standard))
        }
        let options = config.connectionOptions
        let runtime = Runtime(
            context: context, registry: registry, commandTimeout: .seconds(config.broker?.commandTimeout ?? 5),
            endpoint: "\(options.host):\(options.port)")
        runtime.perform(initial.filter { if case .subscribe = $0 { false } else { true } })
        let connection = try MQTTConnection(options: options, handlers: runtime.handlers(endpoint: "\(options.host):\(options.port)"))
        runtime.connection.withLock { $0 = connection }
        self.runtime.withLock { $0 = runtime }
        do {
            runtime.health { $0.connecting(at: $1) }
            try connection.start()
            context.log(.info, "connecting to the MQTT broker at \(options.host):\(options.port)")
            // Until cancelled; looks at the broker's health again now and then, so a connection
            // that stopped dropping becomes healthy once the drops are old enough.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                runtime.health { $0.tick(at: $1) }
            }
        } catch {
            await end(runtime, connection)
            throw error
        }
        await end(runtime, connection)
    }

    /// After a run: the network thread is stopped (awaited off the concurrency pool) and every
    /// device goes offline.
    func end(_ runtime: Runtime, _ connection: MQTTConnection) async {
        self.runtime.withLock { $0 = nil }
        await connection.stop()
        runtime.connection.withLock { $0 = nil }
        // Every report read before the stop reaches the host before the devices go offline
        // and before the plugin's run returns (a flood's batches may still be queued).
        runtime.batcher.flush()
        runtime.perform(runtime.registry.withLock { $0.connectionDown() })
    }

    /// The plugin's own `hearth doctor` check: whether the broker in its configuration accepts
    /// a connection with its credentials (``BrokerProbe``).
    public func doctor(_ request: DoctorRequest) async -> [DoctorFinding] {
        guard let configuration = request.configuration else {
            let why = request.configurationFile.map { "the mqtt plugin is not configured in \($0)" } ?? "no configuration read (pass --config hearth.yaml)"
            return [DoctorFinding(check: "mqtt broker", status: .skipped, explanation: "not checked: \(why), or try one with --broker host:port")]
        }
        let config: MQTTConfiguration
        do {
            config = try configuration.decode(MQTTConfiguration.self)
        } catch {
            return [DoctorFinding(check: "mqtt configuration", status: .problem, explanation: "\(error.message): the mqtt plugin will refuse it")]
        }
        let options = config.connectionOptions
        return [
            BrokerProbe.check(
                host: options.host, port: options.port, username: options.username, password: options.password,
                tls: config.broker?.caFile != nil)
        ]
    }

    public func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
        guard let runtime = runtime.withLock({ $0 }) else {
            throw HomeError.deviceOffline("the MQTT plugin is not running")
        }
        let resolved = try runtime.registry.withLock { try $0.action(for: command) }
        try await runtime.send(resolved)
        return .null
    }

    public func write(_ write: DriverWrite, context: any DriverContext) async throws {
        guard let runtime = runtime.withLock({ $0 }) else {
            throw HomeError.deviceOffline("the MQTT plugin is not running")
        }
        let resolved = try runtime.registry.withLock { try $0.action(for: write) }
        try await runtime.send(resolved)
    }

    /// Refused payloads so far, by entity key (`sensor/node/object`, `config/<id>`).
    public var malformedPayloads: [String: Int] { runtime.withLock { $0?.registry.withLock { $0.malformed } } ?? [:] }

    /// Every topic the plugin subscribes to.
    public var subscribedTopics: Set<String> { runtime.withLock { $0?.registry.withLock { $0.subscribedTopics } } ?? [] }

    /// Topics whose subscription the broker has acknowledged on the current connection.
    public var acknowledgedSubscriptions: Set<String> { runtime.withLock { $0?.subscriptions.withLock { $0.acknowledged } } ?? [] }

    /// Whether the broker connection is up.
    public var isConnected: Bool { runtime.withLock { $0?.registry.withLock { $0.connected } } ?? false }
}

/// One run of the plugin: its registry, its connection, and the context it reports to.
final class Runtime: Sendable {
    let context: any DriverContext
    /// Attribute reports of messages read back to back, handed to the host together.
    let batcher: ReportBatcher
    let registry: Mutex<Registry>
    let connection = Mutex<MQTTConnection?>(nil)
    /// The reason the broker last refused us (logged when it changes).
    let refusal = Mutex<String?>(nil)
    /// Subscriptions sent (by message ID) and acknowledged, on the current connection.
    let subscriptions = Mutex<(pending: [Int32: String], acknowledged: Set<String>)>(([:], []))
    /// Commands' publications expecting the broker's acknowledgement, their waiters, and
    /// acknowledgements that came before their waiter (by message ID).
    let acknowledgements = Mutex<Acknowledgements>(Acknowledgements())

    struct Acknowledgements {
        var expected: Set<Int32> = []
        var waiting: [Int32: CheckedContinuation<Void, Never>] = [:]
        var early: Set<Int32> = []
    }
    /// How long a command waits for the broker's acknowledgement.
    let commandTimeout: Duration

    /// The broker connection's health, reported to the host when it changes.
    let brokerHealth: Mutex<BrokerHealth<ContinuousClock.Instant>>

    init(context: any DriverContext, registry: Registry, commandTimeout: Duration = .seconds(5), endpoint: String = "") {
        self.context = context
        // A burst of 32 reports or more is a flood: the core applies it while the network
        // thread reads on (a lone message, the paced case, goes on the network thread).
        self.batcher = ReportBatcher(context: context, queueAtLeast: 32)
        self.registry = Mutex(registry)
        self.commandTimeout = commandTimeout
        self.brokerHealth = Mutex(BrokerHealth(endpoint: endpoint))
    }

    /// Feeds the broker's health one input; reports the result (outside the lock) when it changed.
    func health(_ input: (inout BrokerHealth<ContinuousClock.Instant>, ContinuousClock.Instant) -> PluginHealth?) {
        let now = ContinuousClock.now
        if let changed = brokerHealth.withLock({ input(&$0, now) }) { context.reportHealth(changed) }
    }

    func handlers(endpoint: String) -> MQTTConnection.Handlers {
        var h = MQTTConnection.Handlers()
        h.connected = { [self] in
            refusal.withLock { $0 = nil }
            health { $0.connected(at: $1) }
            context.log(.info, "connected to the MQTT broker at \(endpoint)")
            perform(registry.withLock { $0.connectionUp() })
        }
        h.refused = { [self] reason in
            health { $0.refused(reason, at: $1) }
            let isNew = refusal.withLock { last -> Bool in
                defer { last = reason }
                return last != reason
            }
            if isNew { context.log(.error, "the MQTT broker at \(endpoint) refused the connection: \(reason); retrying with backoff") }
        }
        h.unreachable = { [self] reason in
            health { $0.unreachable(reason, at: $1) }
            context.log(.warning, "cannot reach the MQTT broker at \(endpoint): \(reason); retrying with backoff")
        }
        h.subscribed = { [self] mid in
            let topic = subscriptions.withLock { s -> String? in
                guard let topic = s.pending.removeValue(forKey: mid) else { return nil }
                s.acknowledged.insert(topic)
                return topic
            }
            if let topic { context.log(.debug, "subscribed to \(topic)") }
        }
        h.published = { [self] mid in
            let waiter = acknowledgements.withLock { a -> CheckedContinuation<Void, Never>? in
                guard a.expected.contains(mid) else { return nil }
                if let w = a.waiting.removeValue(forKey: mid) {
                    a.expected.remove(mid)
                    return w
                }
                a.early.insert(mid)
                return nil
            }
            waiter?.resume()
        }
        h.disconnected = { [self] expected, reason in
            subscriptions.withLock { $0 = ([:], []) }
            let wasConnected = registry.withLock { $0.connected }
            health { $0.lost(reason, expected: expected, at: $1) }
            perform(registry.withLock { $0.connectionDown() })
            if !expected, wasConnected {
                context.log(.warning, "lost the MQTT broker at \(endpoint): \(reason); every device is offline; reconnecting with backoff")
            }
        }
        h.message = { [self] topic, payload, retained in
            let message = Message(topic: topic, payload: Array(payload), retained: retained)
            let effects = registry.withLock { $0.receive(message) }
            // The connection reads every message waiting before it calls `caughtUp`: the
            // reports of a burst join into one hand-over (ReportBatcher).
            perform(effects, moreInput: true)
        }
        h.caughtUp = { [self] in batcher.endOfBurst() }
        return h
    }

    /// Carries out effects (outside the registry's lock). Reports go through the batcher:
    /// handed over now, or with the next messages' when `moreInput` follows (the connection's
    /// `caughtUp` hands them over at the end of a read burst); every other
    /// effect first hands over what is waiting, so the order of everything is kept.
    func perform(_ effects: [Registry.Effect], moreInput: Bool = false) {
        for effect in effects {
            if case .report(let reports) = effect {
                batcher.add(reports, more: moreInput)
                continue
            }
            batcher.flush()
            switch effect {
            case .publish(let d): context.publish(d)
            case .remove(let id): context.remove(device: id)
            case .report(let reports): context.report(reports)  // not reached: batched above
            case .emit(let event): context.emit(event)
            case .connectivity(let state, let device): context.setConnectivity(state, device: device)
            case .traitConnectivity(let state, let device, let trait, let type):
                context.setConnectivity(state, device: device, trait: trait, deviceType: type)
            case .log(let level, let text, let device): context.log(level, text, device: device)
            case .count(let name): context.count(name)
            case .subscribe(let topic, let qos):
                // While disconnected this fails; connecting subscribes every topic again.
                guard let c = connection.withLock({ $0 }) else { continue }
                do {
                    // Held across the call so the acknowledgement cannot arrive before its ID is noted.
                    try subscriptions.withLock { s in
                        let mid = try c.subscribe(topic, qos: qos)
                        s.pending[mid] = topic
                    }
                } catch {
                    if registry.withLock({ $0.connected }) { context.log(.warning, "\(error)") }
                }
            case .unsubscribe(let topic):
                subscriptions.withLock { _ = $0.acknowledged.remove(topic) }
                try? connection.withLock { $0 }?.unsubscribe(topic)
            }
        }
    }

    /// Publishes a command's messages and waits for the broker to acknowledge each (QoS 1/2);
    /// applies the assumed state of an optimistic entity.
    ///
    /// - Throws: ``HomeError`` `timeout` when the broker does not acknowledge within
    ///   ``commandTimeout``: the session is then dropped with everything libmosquitto still
    ///   holds, so the command is not sent again after reconnecting.
    func send(_ resolved: Registry.Resolved) async throws {
        guard let c = connection.withLock({ $0 }) else { throw HomeError.deviceOffline("the MQTT plugin is stopping") }
        for message in resolved.action.publish {
            let mid: Int32
            do {
                // Under the lock, so the acknowledgement cannot be handled before it is expected.
                mid = try acknowledgements.withLock { a throws(MQTTConnection.Failure) in
                    let mid = try c.publish(message.topic, payload: message.payload, qos: message.qos, retain: message.retain)
                    if message.qos > 0 { a.expected.insert(mid) }
                    return mid
                }
            } catch {
                throw HomeError.deviceOffline("cannot reach MQTT device \(resolved.device): \(error)")
            }
            guard message.qos > 0 else { continue }
            guard await acknowledged(mid) else {
                c.dropSession()
                context.count("command_timeouts")
                context.log(.warning, "the MQTT broker did not acknowledge a command to \(message.topic) within \(commandTimeout); the command is dropped, not retried; reconnecting", device: resolved.device)
                throw HomeError.timeout(
                    "the MQTT broker did not acknowledge the command for \(resolved.device) within \(commandTimeout); it is dropped and will not be sent later")
            }
        }
        perform(registry.withLock { $0.assume(resolved) })
    }

    /// Waits for the broker's acknowledgement of `mid`; false after ``commandTimeout``.
    func acknowledged(_ mid: Int32) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { [self] in
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let done = acknowledgements.withLock { a -> Bool in
                        if a.early.remove(mid) != nil {
                            a.expected.remove(mid)
                            return true
                        }
                        guard a.expected.contains(mid) else { return true }  // already given up
                        a.waiting[mid] = continuation
                        return false
                    }
                    if done { continuation.resume() }
                }
                return true
            }
            group.addTask { [self] in
                try? await Task.sleep(for: commandTimeout)
                return false
            }
            let first = await group.next() ?? false
            if !first {
                // Release the waiter (resumed outside the lock).
                let waiter = acknowledgements.withLock { a in
                    a.expected.remove(mid)
                    a.early.remove(mid)
                    return a.waiting.removeValue(forKey: mid)
                }
                waiter?.resume()
            }
            group.cancelAll()
            return first
        }
    }
}

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer { HearthPluginABI.export(MQTTPlugin()) }

extension MQTTPlugin {
    /// For `mqtt-benchmark`: a connected registry with one discovered temperature sensor on
    /// `bench/thermometer` (an opaque box, so the registry stays internal).
    public static func benchmarkRegistry() -> BenchmarkRegistry {
        var registry = Registry()
        _ = registry.connectionUp()
        _ = registry.receive(
            Message(
                topic: "homeassistant/sensor/bench/thermometer/config",
                text: #"{"stat_t": "bench/thermometer", "val_tpl": "{{ value_json.t }}", "dev_cla": "temperature", "unit_of_meas": "°C", "uniq_id": "bench-thermometer"}"#))
        return BenchmarkRegistry(registry: registry)
    }

    /// For `mqtt-benchmark`: handles one message; returns how many attribute reports it produced.
    public static func benchmarkReceive(_ box: inout BenchmarkRegistry, topic: String, payload: [UInt8]) -> Int {
        box.registry.receive(Message(topic: topic, payload: payload)).reduce(0) { n, effect in
            if case .report(let r) = effect { n + r.count } else { n }
        }
    }
}

/// The plugin's registry, opaque, for `mqtt-benchmark`.
public struct BenchmarkRegistry {
    var registry: Registry
}
