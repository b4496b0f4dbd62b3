/// A level change that survived debouncing.
public struct LevelChange: Hashable, Sendable {
    public var level: Bool
    /// The kernel timestamp (CLOCK_MONOTONIC ns) of the edge that began the stable level.
    public var timestampNanoseconds: UInt64

    public init(level: Bool, timestampNanoseconds: UInt64) {
        self.level = level
        self.timestampNanoseconds = timestampNanoseconds
    }
}

/// Software debounce: a new level counts once it has held for `window` without bouncing back.
///
/// Pure: feed it edges and ticks with instants of any clock; it never reads time itself.
/// With a zero window every change passes at once.
public struct Debouncer<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public let window: Duration
    /// The debounced level.
    public private(set) var level: Bool
    var pending: (level: Bool, since: Instant, timestamp: UInt64)?

    public init(window: Duration, initial: Bool) {
        self.window = window
        self.level = initial
    }

    /// An edge to `level` seen at `now`.
    /// - Returns: the change, when it passes at once (zero window).
    public mutating func edge(_ newLevel: Bool, at now: Instant, timestamp: UInt64) -> LevelChange? {
        if window <= .zero {
            pending = nil
            guard newLevel != level else { return nil }
            level = newLevel
            return LevelChange(level: newLevel, timestampNanoseconds: timestamp)
        }
        if newLevel == level {
            pending = nil  // bounced back before the window passed
        } else if pending?.level != newLevel {
            pending = (newLevel, now, timestamp)
        }
        return nil
    }

    /// When ``tick(_:)`` has something to decide, nil when nothing is pending.
    public var deadline: Instant? { pending.map { $0.since.advanced(by: window) } }

    /// Lets time pass: a pending level that held for the window becomes the level.
    public mutating func tick(_ now: Instant) -> LevelChange? {
        guard let p = pending, p.since.advanced(by: window) <= now else { return nil }
        pending = nil
        level = p.level
        return LevelChange(level: p.level, timestampNanoseconds: p.timestamp)
    }

    /// Forces the level (after reading the line directly, e.g. when it is requested).
    public mutating func reset(to newLevel: Bool) {
        level = newLevel
        pending = nil
    }
}
