public import HearthAPI
public import HomeCore
public import Logging
public import ServiceLifecycle
import HomeModel
import Hummingbird

/// The HTTP + WebSocket API under `/api/v1` (see `docs/api.md`), as a service.
///
/// ```swift
/// let server = HearthServer(core: core, access: database.accessStore(), configuration: .init(host: "127.0.0.1", port: 8080))
/// try await server.run()   // or add it to a ServiceGroup
/// ```
public struct HearthServer: Service {
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port (see `onListening`).
        public var port: Int
        /// Largest request body accepted (larger: 413).
        public var maxBodySize: Int
        /// Largest WebSocket message accepted from a client.
        public var maxWebSocketMessage: Int
        /// How often the server pings idle WebSockets.
        public var pingInterval: Duration
        /// Most subscriptions one WebSocket may hold.
        public var maxSubscriptionsPerSocket: Int
        /// Longest an app's long poll for its consent decision waits.
        public var maxConsentWait: Duration
        /// The web page's folder (index.html, app.js, ...), served at `/` and `/web/`; nil
        /// serves no page. See ``HearthServer/defaultWebDirectory(executable:)``.
        public var webDirectory: String?
        /// Header and idle timeouts and the connection cap (`server:` in hearth.yaml).
        public var connections: ConnectionLimits
        /// How `deviceDeltas` subscriptions pace their frames under a flood.
        public var deltaPacing: DeviceDeltaPacing = .standard

        public static let defaultMaxBodySize = 64 * 1024

        public init(
            host: String = "127.0.0.1", port: Int = 8080, maxBodySize: Int = defaultMaxBodySize, maxWebSocketMessage: Int = 64 * 1024,
            pingInterval: Duration = .seconds(30), maxSubscriptionsPerSocket: Int = 64, maxConsentWait: Duration = .seconds(60),
            webDirectory: String? = nil, connections: ConnectionLimits = ConnectionLimits()
        ) {
            self.host = host
            self.port = port
            self.maxBodySize = maxBodySize
            self.maxWebSocketMessage = maxWebSocketMessage
            self.pingInterval = pingInterval
            self.maxSubscriptionsPerSocket = maxSubscriptionsPerSocket
            self.maxConsentWait = maxConsentWait
            self.webDirectory = webDirectory
            self.connections = connections
        }
    }

    public let core: HomeCore
    public let access: any AccessControl
    public let configuration: Configuration
    let pluginStatuses: @Sendable () -> [WirePlugin]
    let loginLimiter: any AttemptLimiter
    let setupLimiter: any AttemptLimiter
    let appRequestLimiter: any AttemptLimiter
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void
    let recentLog: RecentLog?
    /// Renders the Prometheus metrics for `GET /metrics` (admins only); nil: no such route.
    let metrics: (@Sendable () -> [UInt8])?
    /// What leaves the house (`/exposure`); nil: the routes answer 404.
    let exposure: ExposureSettings?
    /// Scenes (`/scenes`) and automations (`/automations`); nil: those routes answer 404.
    let scenes: SceneBook?
    let automations: (any AutomationControl)?
    /// The HomeKit bridges (`/hap`); nil: those routes answer 404.
    let hap: (any HAPAdministration)?
    /// The Matter bridge (`/matter`); nil: those routes answer 404.
    let matter: (any MatterAdministration)?
    let sockets = LiveSockets()
    let consent = ConsentWaiters()
    /// Each device state's JSON, encoded once for every WebSocket subscription that sends it.
    let deviceText: DeviceTextCache
    /// Wakes `users` subscriptions when users are added or removed.
    let userChanges = UserFeed()

    /// How many WebSockets are open now (each carries any number of subscriptions).
    public var openWebSocketCount: Int { sockets.count }

    /// - Parameters:
    ///   - access: users, tokens and grants (HomeStorage's `AccessStore`).
    ///   - pluginStatuses: what `GET /plugins` and `/readyz` report, as wire values.
    ///   - loginLimiter: failed logins per user name and per address (default 5 a minute).
    ///   - setupLimiter: failed setup codes per client address (default 5 in 15 minutes).
    ///   - appRequestLimiter: app access requests per address (default 10 in 10 minutes): the
    ///     one write anyone may make without signing in.
    ///   - onListening: called with the bound port once the server accepts connections.
    ///   - recentLog: what `GET /logs` reports (nil: an empty list).
    ///   - metrics: renders what `GET /metrics` reports to admins (nil: no `/metrics` here;
    ///     see ``MetricsServer`` for a separate listener).
    public init(
        core: HomeCore, access: any AccessControl, configuration: Configuration = Configuration(),
        pluginStatuses: @escaping @Sendable () -> [WirePlugin] = { [] },
        loginLimiter: (any AttemptLimiter)? = nil, setupLimiter: (any AttemptLimiter)? = nil,
        appRequestLimiter: (any AttemptLimiter)? = nil, logger: Logger = Logger(label: "hearth.server"), onListening: @escaping @Sendable (Int) async -> Void = { _ in },
        recentLog: RecentLog? = nil, metrics: (@Sendable () -> [UInt8])? = nil, exposure: ExposureSettings? = nil,
        scenes: SceneBook? = nil, automations: (any AutomationControl)? = nil, hap: (any HAPAdministration)? = nil,
        matter: (any MatterAdministration)? = nil
    ) {
        self.hap = hap
        self.matter = matter
        self.exposure = exposure
        self.scenes = scenes
        self.automations = automations
        self.core = core
        self.deviceText = DeviceTextCache(catalog: core.catalog)
        self.access = access
        self.configuration = configuration
        self.pluginStatuses = pluginStatuses
        self.loginLimiter = loginLimiter ?? RateLimiter(limit: 5, window: .seconds(60))
        self.setupLimiter = setupLimiter ?? RateLimiter(limit: 5, window: .seconds(15 * 60))
        self.appRequestLimiter = appRequestLimiter ?? RateLimiter(limit: 10, window: .seconds(10 * 60))
        self.logger = logger
        self.onListening = onListening
        self.recentLog = recentLog
        self.metrics = metrics
    }

    /// Runs until cancelled or until graceful shutdown.
    public func run() async throws {
        try await application().runService()
    }

    /// Revokes a token everywhere: the store refuses it, the core ends its subscriptions and
    /// refuses its calls, and its open WebSockets are closed at once.
    func revoke(tokenID: String, reason: String) throws(HomeError) -> Bool {
        let revoked = try access.revokeToken(id: tokenID)
        endSession(tokenID, reason: reason)
        // An app's automations stop with its grant (suspended, runs ended).
        if revoked, let automations { Task { await automations.grantRevoked(tokenID) } }
        return revoked
    }

    /// Changes a live grant's scope; its open subscriptions follow at once.
    func updateGrant(_ tokenID: String, scope: GrantScope) throws(HomeError) {
        try access.updateGrant(id: tokenID, scope: scope)
        try followGrant(tokenID)
    }

    /// A grant's stored scope changed: its sockets hear the new scope (`grantUpdated`), its open
    /// subscriptions follow at once.
    func followGrant(_ tokenID: String) throws(HomeError) {
        guard let stored = try access.grants(includeRevoked: false).first(where: { $0.id == tokenID }) else { return }
        sockets.grantUpdated(session: tokenID, scope: stored.scope.wire)
        core.updateScope(session: tokenID, to: stored.scope)
    }

    func endSession(_ tokenID: String, reason: String) {
        core.revoke(session: tokenID)
        sockets.close(session: tokenID, reason: .permissionDenied(reason))
    }
}
