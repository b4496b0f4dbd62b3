/// How a plugin is doing beyond "its `run` has not ended": whether what it depends on (a
/// broker, a bus, a bridge) is reachable. The host shows it in `GET /plugins` and `/readyz`.
///
/// A plugin reports it with ``DriverContext/reportHealth(_:)`` whenever it changes; until its
/// first report the host knows nothing beyond the plugin's run state. When the plugin stops or
/// fails, the host forgets what it last reported.
///
/// ```swift
/// context.reportHealth(.unhealthy("cannot reach the MQTT broker at 127.0.0.1:1883: connection refused"))
/// context.reportHealth(.healthy("connected to 127.0.0.1:1883"))
/// ```
public struct PluginHealth: Hashable, Sendable, Codable {
    public enum State: String, Hashable, Sendable, Codable, CaseIterable {
        /// Everything it depends on answers.
        case healthy
        /// It works, with less than it should (some devices unreachable, a dependency slow).
        /// `/readyz` stays ready and says so.
        case degraded
        /// It cannot do its job (its broker is down, or keeps dropping the connection).
        /// `/readyz` answers 503 while any enabled plugin is unhealthy.
        case unhealthy
    }

    public var state: State
    /// What was found, in words a person can act on (for ``State/healthy`` optional).
    public var reason: String?

    public init(_ state: State, reason: String? = nil) {
        self.state = state
        self.reason = reason
    }

    public static func healthy(_ detail: String? = nil) -> Self { Self(.healthy, reason: detail) }
    public static func degraded(_ reason: String) -> Self { Self(.degraded, reason: reason) }
    public static func unhealthy(_ reason: String) -> Self { Self(.unhealthy, reason: reason) }
}
