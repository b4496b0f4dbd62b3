public import DriverAPI
public import HomeCore
public import HomeModel
public import Logging
public import ServiceLifecycle
import Synchronization

/// Restart policy: exponential backoff from `initial`, capped at `maximum`; parked after
/// `parkAfter` failures in a row. A run that lasted `healthyAfter` or longer starts the count afresh.
public struct RestartPolicy: Hashable, Sendable {
    public var initial: Duration
    public var maximum: Duration
    public var parkAfter: Int
    public var healthyAfter: Duration

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60), parkAfter: Int = 8, healthyAfter: Duration = .seconds(300)) {
        self.initial = initial
        self.maximum = maximum
        self.parkAfter = parkAfter
        self.healthyAfter = healthyAfter
    }

    /// The delay before restart number `attempt` (1-based): `initial · 2^(attempt-1)`, at most `maximum`.
    public func delay(attempt: Int) -> Duration {
        var d = initial
        for _ in 1..<max(1, attempt) {
            d = d * 2
            if d >= maximum { return maximum }
        }
        return min(d, maximum)
    }
}

/// Runs one plugin as a service: checks its configuration, registers its command handler, runs
/// it, and restarts it with backoff when it fails; parks it when it keeps failing.
///
/// The same service supervises an in-process plugin and an ``IsolatedPlugin`` (whose runs end
/// when its process crashes). While the plugin is down its devices are `offline`; each comes
/// back `online` with its next publish, report or event. A plugin that is parked or refuses its
/// configuration does not stop the others: its service waits for shutdown.
public final class PluginService<C: Clock>: Service, CommandHandler, PluginStatusSource, Sendable where C.Duration == Duration {
    public let loaded: LoadedPlugin
    let core: HomeCore
    public let configuration: PluginConfiguration
    let policy: RestartPolicy
    let clock: C
    let logger: Logger
    let context: SupervisedContext
    let status: Mutex<PluginStatus>
    let watchers = Mutex<[Int: AsyncStream<PluginStatus>.Continuation]>([:])
    let nextWatcher = Mutex(0)

    public init(
        _ loaded: LoadedPlugin, core: HomeCore, configuration: PluginConfiguration, policy: RestartPolicy = RestartPolicy(),
        clock: C, logger: Logger
    ) {
        self.loaded = loaded
        self.core = core
        self.configuration = configuration
        self.policy = policy
        self.clock = clock
        var logger = logger
        logger[metadataKey: "plugin"] = "\(loaded.manifest.id)"
        self.logger = logger
        self.context = SupervisedContext(core.context(for: loaded.manifest.id, configuration: configuration))
        self.status = Mutex(
            PluginStatus(
                id: loaded.manifest.id, name: loaded.manifest.name, version: loaded.manifest.version, path: loaded.path,
                state: .starting, isolated: loaded.plugin is IsolatedPlugin))
        (loaded.plugin as? IsolatedPlugin)?.onChange { [weak self] in self?.update { _ in } }
        context.healthChanged.withLock { $0 = { [weak self] in self?.update { _ in } } }
    }

    public var currentStatus: PluginStatus {
        var s = status.withLock { $0 }
        s.health = s.state == .running ? context.health.withLock { $0 } : nil
        if let isolated = loaded.plugin as? IsolatedPlugin {
            s.processID = isolated.processID
            if let m = isolated.announcedManifest {
                s.name = m.name
                s.version = m.version
            }
        }
        return s
    }

    /// The status now and after every change, until the service's run ends.
    public func statusUpdates() -> AsyncStream<PluginStatus> {
        let (stream, continuation) = AsyncStream<PluginStatus>.makeStream()
        let id = nextWatcher.withLock { n in
            n += 1
            return n
        }
        watchers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.removeValue(forKey: id) } }
        continuation.yield(currentStatus)
        return stream
    }

    func update(_ change: (inout PluginStatus) -> Void) {
        status.withLock { change(&$0) }
        let now = currentStatus
        for w in watchers.withLock({ Array($0.values) }) { w.yield(now) }
    }

    public func run() async throws {
        defer { for w in watchers.withLock({ Array($0.values) }) { w.finish() } }
        let plugin = loaded.plugin
        do {
            try plugin.checkConfiguration(configuration)
        } catch {
            refuseConfiguration((error as? HomeError)?.message ?? "\(error)")
            try? await gracefulShutdown()
            return
        }
        do throws(HomeError) {
            // Also done when the plugins are planned; again here for a service started on its own
            // (the same declaration is accepted twice).
            try core.addVendorTraits(plugin.vendorTraits, from: loaded.manifest.id)
        } catch {
            update {
                $0.state = .refused
                $0.lastError = error.message
            }
            logger.error("plugin refused: \(error.message)")
            try? await gracefulShutdown()
            return
        }
        core.setCommandHandler(self, for: loaded.manifest.id)
        defer { core.setCommandHandler(nil, for: loaded.manifest.id) }
        await cancelWhenGracefulShutdown { await self.superviseRuns(plugin) }
        let state = status.withLock { $0.state }
        if state == .parked || state == .invalidConfiguration {
            // The others keep running: wait for shutdown instead of ending the group.
            try? await gracefulShutdown()
        }
        update { if $0.state != .parked && $0.state != .invalidConfiguration { $0.state = .stopped } }
    }

    func refuseConfiguration(_ message: String) {
        update {
            $0.state = .invalidConfiguration
            $0.lastError = message
        }
        logger.error("configuration refused; the plugin will not start: \(message)")
    }

    /// Runs the plugin until cancelled, restarting it with backoff when it fails.
    func superviseRuns(_ plugin: any DriverPlugin) async {
        var failures = 0
        while !Task.isCancelled {
            update {
                $0.state = .running
                $0.restartDelaySeconds = nil
            }
            logger.info("plugin started", metadata: ["version": "\(loaded.manifest.version)"])
            let started = clock.now
            let why: String
            do {
                try await plugin.run(context: context)
                if Task.isCancelled { break }
                why = "run() returned before shutdown"
            } catch is CancellationError {
                break
            } catch let error as PluginRunError where error.isPermanent {
                if error.kind == .invalidConfiguration {
                    refuseConfiguration(error.message)
                } else {
                    update {
                        $0.state = .parked
                        $0.lastError = error.message
                    }
                    logger.error("plugin parked: \(error.message)")
                }
                context.markDown()
                break
            } catch {
                if Task.isCancelled { break }
                why = (error as? HomeError)?.message ?? "\(error)"
            }
            if started.duration(to: clock.now) >= policy.healthyAfter { failures = 0 }
            failures += 1
            context.markDown()
            if failures >= policy.parkAfter {
                update {
                    $0.state = .parked
                    $0.lastError = why
                }
                logger.error("plugin failed \(failures) times in a row; parked until hearthd restarts: \(why)")
                break
            }
            let delay = policy.delay(attempt: failures)
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            update {
                $0.state = .restarting
                $0.lastError = why
                $0.restarts += 1
                $0.restartDelaySeconds = seconds
            }
            core.metrics.pluginRestarted(loaded.manifest.id)
            logger.error("plugin failed: \(why); restarting in \(delay)")
            do { try await clock.sleep(for: delay) } catch { break }
        }
    }

    public func handle(_ command: DriverCommand) async throws -> Value {
        try await loaded.plugin.handle(command, context: context)
    }

    public func write(_ write: DriverWrite) async throws {
        try await loaded.plugin.write(write, context: context)
    }
}
