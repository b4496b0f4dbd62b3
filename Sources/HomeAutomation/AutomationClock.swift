public import Foundation

/// The engine's time: the wall clock (schedules, due times kept in the database) and sleeping
/// until a wall-clock instant. Tests inject a manual one; hearthd uses ``SystemAutomationClock``.
public protocol AutomationClock: Sendable {
    func now() -> Date
    /// Sleeps until `date` (returns at once when it has passed); throws when cancelled.
    func sleep(until date: Date) async throws
    /// Whether the wall clock is synchronised (a Pi without RTC boots in 1970 or last shutdown's time).
    var isSynchronized: Bool { get }
}

/// The system's clock: `Date()` and `ContinuousClock` sleeps, re-checked so a wall-clock step
/// (NTP sync) is noticed within a second.
public struct SystemAutomationClock: AutomationClock {
    public init() {}
    public func now() -> Date { Date() }
    public func sleep(until date: Date) async throws {
        while true {
            let left = date.timeIntervalSinceNow
            if left <= 0 { return }
            try await Task.sleep(for: .milliseconds(Int64(min(left, 1.0) * 1000) + 1))
        }
    }
    public var isSynchronized: Bool { ClockSync.isSynchronized() }
}

/// Reads the kernel's "clock unsynchronised" state (adjtimex: TIME_ERROR), as timesyncd sets it.
public enum ClockSync {
    public static func isSynchronized() -> Bool {
        #if os(Linux)
        // /run/systemd/timesync/synchronized exists once systemd-timesyncd synchronised; without
        // timesyncd, trust a clock that is past this build's year (a Pi without RTC starts in 1970).
        if FileManager.default.fileExists(atPath: "/run/systemd/timesync/synchronized") { return true }
        #endif
        return Date().timeIntervalSince1970 > 1_750_000_000
    }
}
