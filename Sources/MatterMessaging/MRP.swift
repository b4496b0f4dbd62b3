/// The Message Reliability Protocol's constants and backoff (Matter Core Specification 4.12.8
/// and 4.12.2.1).
public struct MRPConfiguration: Hashable, Sendable {
    /// MRP_MAX_TRANSMISSIONS: the first transmission and 4 retransmissions.
    public var maxTransmissions = 5
    /// MRP_BACKOFF_BASE.
    public var backoffBase = 1.6
    /// MRP_BACKOFF_JITTER.
    public var backoffJitter = 0.25
    /// MRP_BACKOFF_MARGIN.
    public var backoffMargin = 1.1
    /// MRP_BACKOFF_THRESHOLD: transmissions before the exponential part starts.
    public var backoffThreshold = 1
    /// MRP_STANDALONE_ACK_TIMEOUT: how long an ack waits for a message to ride on.
    public var standaloneAckTimeout: Duration = .milliseconds(200)

    public init() {}

    public static let `default` = MRPConfiguration()

    /// The time to wait after transmission number `n` (0 for the first) before sending again:
    /// `i · MARGIN · BASE^max(0, n − THRESHOLD) · (1 + jitter · JITTER)` with `i` the peer's
    /// active or idle interval and `jitter` uniform in [0, 1).
    public func backoff(baseInterval: Duration, transmission n: Int, jitter: Double) -> Duration {
        let exponent = Double(max(0, n - backoffThreshold))
        var factor = backoffMargin
        for _ in 0..<Int(exponent) { factor *= backoffBase }
        factor *= 1.0 + min(max(jitter, 0), 1) * backoffJitter
        return baseInterval * factor
    }
}
