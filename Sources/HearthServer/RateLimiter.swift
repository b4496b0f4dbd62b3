public import HomeModel
import Synchronization

/// Counts failed attempts (logins, setup codes) per key and refuses more than `limit` within
/// `window` with `rateLimited`. Time comes from an injected clock, so tests advance it.
public protocol AttemptLimiter: Sendable {
    /// Throws `rateLimited` while `key` has used up its failures.
    func check(_ key: String) throws(HomeError)
    func recordFailure(_ key: String)
    /// Forgets a key's failures (after a success).
    func reset(_ key: String)
}

/// An ``AttemptLimiter`` with a sliding window.
public final class RateLimiter<C: Clock>: AttemptLimiter where C.Duration == Duration {
    let clock: C
    let limit: Int
    let window: Duration
    /// At most this many keys are remembered; the stalest are forgotten first, so an attacker
    /// trying many names cannot grow memory without bound.
    let maxKeys: Int
    let failures = Mutex<[String: [C.Instant]]>([:])

    public init(clock: C, limit: Int, window: Duration, maxKeys: Int = 10_000) {
        self.clock = clock
        self.limit = limit
        self.window = window
        self.maxKeys = maxKeys
    }

    public func check(_ key: String) throws(HomeError) {
        let now = clock.now
        let retryAfter: Duration? = failures.withLock { f in
            let recent = (f[key] ?? []).filter { $0.duration(to: now) < window }
            f[key] = recent.isEmpty ? nil : recent
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return window - oldest.duration(to: now)
        }
        if let retryAfter {
            let seconds = max(1, Int(retryAfter.components.seconds) + (retryAfter.components.attoseconds > 0 ? 1 : 0))
            throw HomeError(.rateLimited, "too many failed attempts; try again in \(seconds) s")
        }
    }

    public func recordFailure(_ key: String) {
        let now = clock.now
        failures.withLock { f in
            f[key, default: []].append(now)
            if f[key]!.count > limit { f[key]!.removeFirst(f[key]!.count - limit) }
            if f.count > maxKeys {
                for (k, v) in f where v.allSatisfy({ $0.duration(to: now) >= window }) { f[k] = nil }
                while f.count > maxKeys, let stalest = f.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) })?.key {
                    f[stalest] = nil
                }
            }
        }
    }

    public func reset(_ key: String) { failures.withLock { _ = $0.removeValue(forKey: key) } }

    /// How many keys are remembered (for tests of the memory bound).
    public var keyCount: Int { failures.withLock { $0.count } }
}

extension RateLimiter where C == ContinuousClock {
    public convenience init(limit: Int, window: Duration) {
        self.init(clock: ContinuousClock(), limit: limit, window: window)
    }
}
