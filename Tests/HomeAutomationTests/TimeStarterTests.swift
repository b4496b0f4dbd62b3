import Foundation
import HomeAutomation
import Testing

/// Time starters on DST days in two zones: a time in the spring gap fires at the first valid
/// instant after it; a time in the autumn repeat fires once.
@Suite struct TimeStarterTests {
    static func utc(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    /// The instants a starter fires on, from `start`, `count` times (each after the previous one).
    static func instants(_ t: TimeStarter, from start: String, zone: String, count: Int) -> [Date] {
        var out: [Date] = []
        var after = utc(start)
        for _ in 0..<count {
            guard let next = t.nextInstant(after: after, in: TimeZone(identifier: zone)!) else { break }
            out.append(next)
            after = next.addingTimeInterval(1)
        }
        return out
    }

    @Test(arguments: [
        // Amsterdam: 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
        ("Europe/Amsterdam", "2026-03-28T12:00:00Z", ["2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"]),
        ("Europe/Amsterdam", "2026-10-24T12:00:00Z", ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]),
        // New York: 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
        ("America/New_York", "2026-03-07T12:00:00Z", ["2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"]),
    ])
    func twoThirtyOnDSTDays(_ zone: String, _ start: String, _ expected: [String]) {
        let got = Self.instants(TimeStarter(at: "02:30"), from: start, zone: zone, count: 2)
        #expect(got == expected.map(Self.utc), "\(got)")
    }

    @Test func repeatedHour_firesOnce_inNewYork() {
        // 01:30 happens twice on 2026-11-01 (EDT 05:30Z, then EST 06:30Z): once, at the first.
        let got = Self.instants(TimeStarter(at: "01:30"), from: "2026-10-31T12:00:00Z", zone: "America/New_York", count: 2)
        #expect(got == [Self.utc("2026-11-01T05:30:00Z"), Self.utc("2026-11-02T06:30:00Z")], "\(got)")
    }

    @Test func days_andEvery_andOnce() {
        // 2026-06-01 is a Monday.
        let weekdays = Self.instants(TimeStarter(at: "07:00", days: ["wed", "fri"]), from: "2026-06-01T00:00:00Z", zone: "UTC", count: 2)
        #expect(weekdays == [Self.utc("2026-06-03T07:00:00Z"), Self.utc("2026-06-05T07:00:00Z")])
        let every = Self.instants(TimeStarter(every: .minutes(15)), from: "2026-06-01T10:07:00Z", zone: "UTC", count: 3)
        #expect(every == ["2026-06-01T10:15:00Z", "2026-06-01T10:30:00Z", "2026-06-01T10:45:00Z"].map(Self.utc))
        let once = Self.instants(TimeStarter(once: "2026-12-24T18:00"), from: "2026-06-01T00:00:00Z", zone: "Europe/Amsterdam", count: 2)
        #expect(once == [Self.utc("2026-12-24T17:00:00Z")], "once fires once")
    }
}
