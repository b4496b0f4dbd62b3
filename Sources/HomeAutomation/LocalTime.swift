public import Foundation

/// A time of day (second resolution), and the calendar arithmetic of time starters in a time
/// zone: nonexistent local times (a DST gap) run at the first valid instant after; repeated
/// ones (the hour that comes twice) run once, at the first.
struct LocalTime: Hashable, Sendable {
    let hour: Int, minute: Int, second: Int

    init?(parsing text: String) {
        let parts = text.split(separator: ":").map { Int($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }) else { return nil }
        let h = parts[0]!, m = parts[1]!, s = parts.count == 3 ? parts[2]! : 0
        guard (0..<24).contains(h), (0..<60).contains(m), (0..<60).contains(s) else { return nil }
        hour = h
        minute = m
        second = s
    }

    var secondsOfDay: Int { hour * 3600 + minute * 60 + second }

    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// Calendar weekday (1 = Sunday) of `mon`, `Monday`, `tue`…
    static func weekday(_ name: String) -> Int? {
        let key = name.lowercased().prefix(3)
        return dayNames.firstIndex(of: String(key)).map { $0 + 1 }
    }

    static func calendar(_ zone: TimeZone) -> Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = zone
        return c
    }

    /// `2026-12-24T18:00` (local, seconds optional) → components.
    static func parseDateTime(_ text: String) -> DateComponents? {
        let halves = text.split(separator: "T")
        guard halves.count == 2 else { return nil }
        let date = halves[0].split(separator: "-").compactMap { Int($0) }
        guard date.count == 3, let time = LocalTime(parsing: String(halves[1])) else { return nil }
        return DateComponents(year: date[0], month: date[1], day: date[2], hour: time.hour, minute: time.minute, second: time.second)
    }

    /// The first instant after `after` at this time of day, on one of `days` (nil = every day).
    func next(after: Date, days: Set<Int>?, zone: TimeZone) -> Date? {
        let cal = Self.calendar(zone)
        var start = after
        for _ in 0..<8 {
            guard
                let candidate = cal.nextDate(
                    after: start, matching: DateComponents(hour: hour, minute: minute, second: second),
                    matchingPolicy: .nextTime, repeatedTimePolicy: .first, direction: .forward)
            else { return nil }
            // The second occurrence of a repeated local time (the hour that comes twice when
            // clocks go back) is skipped: the same wall time 30 or 60 minutes earlier fired.
            let wall = cal.dateComponents([.year, .month, .day, .hour, .minute, .second], from: candidate)
            let repeated = [1800.0, 3600.0].contains {
                cal.dateComponents([.year, .month, .day, .hour, .minute, .second], from: candidate.addingTimeInterval(-$0)) == wall
            }
            if !repeated, days == nil || days!.contains(cal.component(.weekday, from: candidate)) { return candidate }
            start = candidate
        }
        return nil
    }

    /// The next instant after `after` on the `every` grid aligned to the local hour.
    static func nextEvery(after: Date, every: Span, zone: TimeZone) -> Date {
        let cal = calendar(zone)
        let hourStart = cal.dateInterval(of: .hour, for: after)?.start ?? after
        let step = max(1, every.timeInterval)
        let elapsed = after.timeIntervalSince(hourStart)
        let n = (elapsed / step).rounded(.down) + 1
        return hourStart.addingTimeInterval(n * step)
    }

    /// Whether `date`'s local time is in [after, before) (wrapping midnight) and on `days`.
    static func matches(_ date: Date, after: LocalTime?, before: LocalTime?, days: Set<Int>?, zone: TimeZone) -> Bool {
        let cal = calendar(zone)
        let c = cal.dateComponents([.hour, .minute, .second, .weekday], from: date)
        if let days, !days.contains(c.weekday ?? 0) { return false }
        let now = (c.hour ?? 0) * 3600 + (c.minute ?? 0) * 60 + (c.second ?? 0)
        switch (after?.secondsOfDay, before?.secondsOfDay) {
        case (nil, nil): return true
        case (let a?, nil): return now >= a
        case (nil, let b?): return now < b
        case (let a?, let b?): return a <= b ? (now >= a && now < b) : (now >= a || now < b)
        }
    }
}

extension TimeStarter {
    /// The first instant strictly after `after` at which this starter fires, in `zone`: a time
    /// inside a DST gap fires at the first valid instant after it; a repeated time fires once.
    public func nextInstant(after: Date, in zone: TimeZone) -> Date? {
        if let at = at.flatMap(LocalTime.init(parsing:)) {
            let days = days.map { Set($0.compactMap(LocalTime.weekday)) }
            return at.next(after: after, days: days, zone: zone)
        }
        if let every { return LocalTime.nextEvery(after: after, every: every, zone: zone) }
        if let once = once.flatMap(LocalTime.parseDateTime) {
            return LocalTime.calendar(zone).date(from: once).flatMap { $0 > after ? $0 : nil }
        }
        return nil
    }
}
