public import DriverAPI

/// The broker connection's health, as the plugin reports it to the host (`/readyz`): a pure
/// value fed the connection's events with the instant each happened.
///
/// - Not connected (yet, or any more, or refused, or unreachable): `unhealthy`, with why.
/// - Connected, but the broker dropped the connection `flapLimit` times within `window` (a
///   broker that keeps closing it, for example over a malformed SUBSCRIBE): still `unhealthy`,
///   until the connection has held for `window`.
/// - Otherwise `healthy`.
///
/// Each input returns the health to report when it changed, nil when it did not.
public struct BrokerHealth<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public let endpoint: String
    public let flapLimit: Int
    public let window: Duration
    var connected = false
    /// When the broker dropped an established connection, within `window` of the last input.
    var drops: [Instant] = []
    var lastDrop: String?
    /// What was last reported.
    public private(set) var reported: PluginHealth?

    public init(endpoint: String, flapLimit: Int = 3, window: Duration = .seconds(60)) {
        self.endpoint = endpoint
        self.flapLimit = max(1, flapLimit)
        self.window = window
    }

    /// The plugin starts connecting.
    public mutating func connecting(at now: Instant) -> PluginHealth? {
        connected = false
        return settle(.unhealthy("connecting to the MQTT broker at \(endpoint)"), at: now)
    }

    public mutating func connected(at now: Instant) -> PluginHealth? {
        connected = true
        return settle(nil, at: now)
    }

    /// The broker closed an established connection (or the network did); `expected` when the
    /// plugin asked for it (stopping).
    public mutating func lost(_ reason: String, expected: Bool, at now: Instant) -> PluginHealth? {
        let wasConnected = connected
        connected = false
        if wasConnected && !expected {
            drops.append(now)
            lastDrop = reason
        }
        return settle(.unhealthy("lost the MQTT broker at \(endpoint): \(reason); reconnecting"), at: now)
    }

    public mutating func refused(_ reason: String, at now: Instant) -> PluginHealth? {
        connected = false
        return settle(.unhealthy("the MQTT broker at \(endpoint) refused the connection: \(reason)"), at: now)
    }

    public mutating func unreachable(_ reason: String, at now: Instant) -> PluginHealth? {
        connected = false
        return settle(.unhealthy("cannot reach the MQTT broker at \(endpoint): \(reason)"), at: now)
    }

    /// Looks again as time passes: drops older than `window` no longer count.
    public mutating func tick(at now: Instant) -> PluginHealth? { settle(nil, at: now) }

    /// Reports `down` while disconnected; while connected, healthy unless it keeps dropping.
    mutating func settle(_ down: PluginHealth?, at now: Instant) -> PluginHealth? {
        drops.removeAll { $0.duration(to: now) >= window }
        let health: PluginHealth
        if connected {
            if drops.count >= flapLimit {
                health = .unhealthy(
                    "the MQTT broker at \(endpoint) dropped the connection \(drops.count) times in the last \(window.components.seconds) s"
                        + (lastDrop.map { " (last: \($0))" } ?? ""))
            } else {
                health = .healthy("connected to the MQTT broker at \(endpoint)")
            }
        } else {
            guard let down = down ?? reported else { return nil }
            health = down
        }
        guard health != reported else { return nil }
        reported = health
        return health
    }
}
