public import DriverAPI
import Synchronization

/// What the host knows about a plugin (shown by `hearth plugins` and `GET /api/v1/plugins`).
public struct PluginStatus: Hashable, Sendable, Codable {
    public enum State: String, Hashable, Sendable, Codable {
        case starting, running, restarting
        /// Failed too many times in a row; not restarted until the daemon restarts.
        case parked
        case stopped
        /// Its section of `hearth.yaml` was refused; ``PluginStatus/lastError`` says where and why.
        case invalidConfiguration
        /// The file was not loaded at all (not a plugin, wrong ABI or compiler, duplicate ID).
        case refused
        /// Switched off with `enabled: false`.
        case disabled
    }

    /// The plugin ID (empty for a refused file whose ID could not be read).
    public var id: String
    public var name: String
    public var version: String
    /// The `.so` file, or the program of a plugin written in another language.
    public var path: String
    public var state: State
    /// How many times it failed and was restarted.
    public var restarts: Int
    /// The last failure, the configuration problem, or why the file was refused.
    public var lastError: String?
    /// Whether it runs in its own process.
    public var isolated: Bool
    /// The plugin's process while one runs (isolated mode only).
    public var processID: Int32?
    /// While ``State/restarting``: the delay before the next start, in seconds.
    public var restartDelaySeconds: Double?
    /// What the running plugin last said about its health (``DriverContext/reportHealth(_:)``);
    /// nil before its first report and after its run ended.
    public var health: PluginHealth?

    public init(
        id: String, name: String, version: String, path: String, state: State, restarts: Int = 0, lastError: String? = nil,
        isolated: Bool = false, processID: Int32? = nil, restartDelaySeconds: Double? = nil, health: PluginHealth? = nil
    ) {
        self.id = id
        self.name = name
        self.version = version
        self.path = path
        self.state = state
        self.restarts = restarts
        self.lastError = lastError
        self.isolated = isolated
        self.processID = processID
        self.restartDelaySeconds = restartDelaySeconds
        self.health = health
    }

    /// Parked, refused, or with a refused configuration: needs a person.
    public var isFailed: Bool { state == .parked || state == .refused || state == .invalidConfiguration }
}

/// Something that can say how a plugin is doing (a ``PluginService``).
public protocol PluginStatusSource: Sendable {
    var currentStatus: PluginStatus { get }
}

/// Every plugin the host found — running, failed, refused or disabled — for `hearth plugins`.
///
/// The API serves ``statuses()`` through a `@Sendable () -> [PluginStatus]` closure
/// (``statusProvider``), so it need not know about services.
public final class PluginRegistry: Sendable {
    enum Entry: Sendable {
        case live(any PluginStatusSource)
        case fixed(PluginStatus)
    }

    let entries = Mutex<[Entry]>([])

    public init() {}

    /// Adds a running plugin's service.
    public func add(_ source: any PluginStatusSource) { entries.withLock { $0.append(.live(source)) } }

    /// Adds a plugin that will not run: refused or disabled.
    public func add(_ status: PluginStatus) { entries.withLock { $0.append(.fixed(status)) } }

    /// Adds a file the loader refused.
    public func add(refused error: PluginLoadError) {
        add(
            PluginStatus(
                id: error.pluginID ?? "", name: error.path.split(separator: "/").last.map(String.init) ?? error.path, version: "", path: error.path,
                state: .refused, lastError: "\(error.reason.rawValue): \(error.message)"))
    }

    /// Every plugin's status, in the order they were found.
    public func statuses() -> [PluginStatus] {
        entries.withLock { $0 }.map { entry in
            switch entry {
            case .live(let s): s.currentStatus
            case .fixed(let s): s
            }
        }
    }

    /// The status of plugin `id`, if the host knows one.
    public func status(of id: String) -> PluginStatus? { statuses().first { $0.id == id } }

    /// ``statuses()`` as a closure, for the API.
    public var statusProvider: @Sendable () -> [PluginStatus] { { [self] in self.statuses() } }
}
