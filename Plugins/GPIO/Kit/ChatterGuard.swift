/// Keeps a chattering input (a failing contact, a loose wire) from flooding the home and the
/// log: a line that changes more than `limit` times within `window` — each change slower than
/// the debounce window, so debouncing lets it through — is set aside. Its device keeps its last
/// steady level (the one it held for at least `quiet` before the chatter began); changes are
/// ignored until the line holds one level for `quiet`, and then that level counts again.
///
/// Pure: feed it the debounced changes and ticks with instants of any clock.
public struct ChatterGuard<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What to do with a change.
    public enum Verdict: Hashable, Sendable {
        /// An ordinary change: report it.
        case pass(LevelChange)
        /// The line has just started chattering: warn once; report `restore` (the last steady
        /// level) when it differs from what was reported.
        case tripped(restore: LevelChange?)
        /// The line chatters: report nothing.
        case suppressed
    }

    /// More than this many changes within the window is chatter, unless set otherwise.
    public static var defaultLimit: Int { 24 }

    /// `.max`: never chatter (the guard is off for the line, `chatter-guard: false`).
    public let limit: Int
    public let window: Duration
    public let quiet: Duration
    /// Whether changes are being ignored.
    public private(set) var isChattering = false
    /// How many changes were ignored in the current chatter.
    public private(set) var ignored = 0
    /// The level last reported (or set aside while chattering).
    public private(set) var reported: Bool
    /// The level the line last held for at least `quiet`.
    public private(set) var steady: Bool
    var level: Bool
    var lastChange: (at: Instant, timestamp: UInt64)?
    var recent: [Instant] = []

    /// - Parameters:
    ///   - limit: more changes than this within `window` is chatter (default 24: a dozen presses).
    ///   - window: the span the changes are counted over (default 10 s).
    ///   - quiet: how long the line must hold one level to count again (default 10 s).
    public init(limit: Int = Self.defaultLimit, window: Duration = .seconds(10), quiet: Duration = .seconds(10), initial: Bool) {
        self.limit = limit
        self.window = window
        self.quiet = quiet
        reported = initial
        steady = initial
        level = initial
    }

    /// A debounced change at `now`.
    public mutating func change(_ change: LevelChange, at now: Instant) -> Verdict {
        if let last = lastChange, last.at.advanced(by: quiet) <= now { steady = level }
        if lastChange == nil { steady = level }
        level = change.level
        lastChange = (now, change.timestampNanoseconds)
        if isChattering {
            ignored += 1
            return .suppressed
        }
        guard limit < .max else {
            // Off: nothing is counted, so a fast pulse line costs nothing here.
            reported = change.level
            return .pass(change)
        }
        recent.append(now)
        let window = window
        recent.removeAll { $0.advanced(by: window) <= now }
        guard recent.count > limit else {
            reported = change.level
            return .pass(change)
        }
        isChattering = true
        ignored = 1
        recent = []
        guard reported != steady else { return .tripped(restore: nil) }
        reported = steady
        return .tripped(restore: LevelChange(level: steady, timestampNanoseconds: change.timestampNanoseconds))
    }

    /// When ``tick(_:)`` can end the chatter, nil when the line is not chattering.
    public var deadline: Instant? { isChattering ? lastChange.map { $0.at.advanced(by: quiet) } : nil }

    /// Lets time pass: a chattering line that has held one level for `quiet` counts again.
    /// - Returns: nil while nothing ends; else the level to report (nil inside when it is the
    ///   one already reported) — the caller logs that the line is steady again.
    public mutating func tick(_ now: Instant) -> LevelChange?? {
        guard isChattering, let last = lastChange, last.at.advanced(by: quiet) <= now else { return nil }
        isChattering = false
        ignored = 0
        steady = level
        guard level != reported else { return .some(nil) }
        reported = level
        return .some(LevelChange(level: level, timestampNanoseconds: last.timestamp))
    }

    /// Forces the level (after reading the line directly, e.g. when it is requested again).
    public mutating func reset(to newLevel: Bool) {
        level = newLevel
        reported = newLevel
        steady = newLevel
        isChattering = false
        ignored = 0
        recent = []
        lastChange = nil
    }
}
