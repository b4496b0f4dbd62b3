public import DriverAPI
public import HomeCore
public import HomeModel
public import Logging
public import ServiceLifecycle
import Synchronization

/// What the host knows about a running plugin (shown by `hearth plugins`).
public struct PluginStatus: Hashable, Sendable, Codable {
    public enum State: String, Hashable, Sendable, Codable {
        case starting, running, restarting, parked, stopped, invalidConfiguration
    }
    public var id: String
    public var name: String
    public var version: String
    public var path: String
    public var state: State
    public var restarts: Int
    public var lastError: String?
}

/// Restart policy: exponential backoff from `initial`, capped at `maximum`; parked after
/// `parkAfter` failures in a row.
public struct RestartPolicy: Hashable, Sendable {
    public var initial: Duration
    public var maximum: Duration
    public var parkAfter: Int
    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60), parkAfter: Int = 8) {
        self.initial = initial
        self.maximum = maximum
        self.parkAfter = parkAfter
    }

    /// The delay before restart number `attempt` (1-based).
    public func delay(attempt: Int) -> Duration {
        var d = initial
        for _ in 1..<max(1, attempt) {
            d = d * 2
            if d >= maximum { return maximum }
        }
        return min(d, maximum)
    }
}

/// Runs one plugin as a service: validates its configuration, registers its command handler,
/// runs it, and restarts it with backoff when it throws; parks it when it keeps failing.
public final class PluginService<C: Clock>: Service, CommandHandler, Sendable where C.Duration == Duration {
    public let loaded: LoadedPlugin
    let core: HomeCore
    let configuration: PluginConfiguration
    let policy: RestartPolicy
    let clock: C
    let logger: Logger
    let context: any DriverContext
    let status: Mutex<PluginStatus>

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
        self.context = core.context(for: loaded.manifest.id, configuration: configuration)
        self.status = Mutex(
            PluginStatus(
                id: loaded.manifest.id, name: loaded.manifest.name, version: loaded.manifest.version, path: loaded.path,
                state: .starting, restarts: 0, lastError: nil))
    }

    public var currentStatus: PluginStatus { status.withLock { $0 } }

    public func run() async throws {
        let plugin = loaded.plugin
        do {
            try plugin.validate(configuration: configuration)
        } catch {
            let message = (error as? HomeError)?.message ?? "\(error)"
            status.withLock {
                $0.state = .invalidConfiguration
                $0.lastError = message
            }
            logger.error("configuration refused; the plugin will not start: \(message)")
            // The others keep running: wait for shutdown instead of failing the group.
            try? await gracefulShutdown()
            return
        }
        core.setCommandHandler(self, for: loaded.manifest.id)
        defer { core.setCommandHandler(nil, for: loaded.manifest.id) }
        await cancelWhenGracefulShutdown { await self.superviseRuns(plugin) }
        status.withLock { if $0.state != .parked { $0.state = .stopped } }
        if status.withLock({ $0.state == .parked }) {
            try? await gracefulShutdown()
        }
    }

    /// Runs the plugin until cancelled, restarting it with backoff when it throws.
    func superviseRuns(_ plugin: any DriverPlugin) async {
        var failures = 0
            while !Task.isCancelled {
                self.status.withLock { $0.state = .running }
                self.logger.info("plugin started", metadata: ["version": "\(self.loaded.manifest.version)"])
                do {
                    try await plugin.run(context: self.context)
                    if Task.isCancelled { break }
                    failures = 0
                    self.logger.warning("plugin returned from run(); restarting it")
                } catch is CancellationError {
                    break
                } catch {
                    if Task.isCancelled { break }
                    failures += 1
                    self.status.withLock {
                        $0.lastError = "\(error)"
                        $0.restarts += 1
                    }
                    self.context.setConnectivity(.offline, device: nil)
                    if failures >= self.policy.parkAfter {
                        self.status.withLock { $0.state = .parked }
                        self.logger.error("plugin failed \(failures) times in a row; parked until restart: \(error)")
                        break
                    }
                    let delay = self.policy.delay(attempt: failures)
                    self.status.withLock { $0.state = .restarting }
                    self.logger.error("plugin failed: \(error); restarting in \(delay)")
                    do { try await self.clock.sleep(for: delay) } catch { break }
                }
            }
    }

    public func handle(_ command: DriverCommand) async throws -> Value {
        try await loaded.plugin.handle(command, context: context)
    }

    public func write(_ write: DriverWrite) async throws {
        try await loaded.plugin.write(write, context: context)
    }
}
