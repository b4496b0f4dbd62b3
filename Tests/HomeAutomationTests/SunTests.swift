import DriverTesting
import Foundation
import HomeAutomation
import HomeCore
import HomeModel
import TestSupport
import Testing

/// Sunrise, sunset, dawn and dusk computed locally (NOAA's solar equations): against published
/// times, against the equations' own elevation at the computed instants, polar days and nights,
/// and a sun starter firing at sunset − 30 min.
@Suite(.timeLimit(.minutes(1))) struct SunTests {
    struct Reference: Sendable, CustomStringConvertible {
        let city: String, latitude: Double, longitude: Double, zone: String, date: String, sunrise: String, sunset: String
        var description: String { "\(city) \(date)" }
    }

    /// Times as published (timeanddate.com / NOAA's Solar Calculator, rounded to the minute,
    /// local clock time).
    static let published: [Reference] = [
        Reference(city: "London", latitude: 51.5074, longitude: -0.1278, zone: "Europe/London", date: "2024-06-20", sunrise: "04:43", sunset: "21:21"),
        Reference(city: "London", latitude: 51.5074, longitude: -0.1278, zone: "Europe/London", date: "2024-12-21", sunrise: "08:04", sunset: "15:53"),
        Reference(city: "New York", latitude: 40.7128, longitude: -74.0060, zone: "America/New_York", date: "2024-06-20", sunrise: "05:25", sunset: "20:31"),
        Reference(city: "New York", latitude: 40.7128, longitude: -74.0060, zone: "America/New_York", date: "2024-12-21", sunrise: "07:17", sunset: "16:32"),
        Reference(city: "Sydney", latitude: -33.8688, longitude: 151.2093, zone: "Australia/Sydney", date: "2024-12-21", sunrise: "05:41", sunset: "20:05"),
        Reference(city: "Sydney", latitude: -33.8688, longitude: 151.2093, zone: "Australia/Sydney", date: "2024-06-21", sunrise: "07:00", sunset: "16:54"),
    ]

    static func day(_ date: String, _ zone: TimeZone) -> Date {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = zone
        let p = date.split(separator: "-").map { Int($0)! }
        return c.date(from: DateComponents(year: p[0], month: p[1], day: p[2], hour: 12))!
    }

    static func clock(_ date: Date, _ zone: TimeZone) -> String {
        let f = DateFormatter()
        f.timeZone = zone
        f.dateFormat = "HH:mm:ss"
        return f.string(from: date)
    }

    static func minutes(_ hhmm: String) -> Double {
        let p = hhmm.split(separator: ":").map { Double($0)! }
        return p[0] * 60 + p[1] + (p.count > 2 ? p[2] / 60 : 0)
    }

    @Test(arguments: published) func sunriseAndSunset_matchPublishedTimes_withinTwoMinutes(_ r: Reference) throws {
        let zone = try #require(TimeZone(identifier: r.zone))
        let here = SolarLocation(latitude: r.latitude, longitude: r.longitude)
        let day = Self.day(r.date, zone)
        let rise = try #require(SolarCalculator.time(of: .sunrise, onDayOf: day, in: zone, here))
        let set = try #require(SolarCalculator.time(of: .sunset, onDayOf: day, in: zone, here))
        // The published minute is rounded: allow ±2 min around it.
        #expect(abs(Self.minutes(Self.clock(rise, zone)) - Self.minutes(r.sunrise)) <= 2, "\(r): sunrise \(Self.clock(rise, zone)), published \(r.sunrise)")
        #expect(abs(Self.minutes(Self.clock(set, zone)) - Self.minutes(r.sunset)) <= 2, "\(r): sunset \(Self.clock(set, zone)), published \(r.sunset)")
    }

    /// 2,000 random places (±65°) and dates (2000–2040): the events are in order, and at each
    /// computed instant the sun stands at the event's elevation (the equations agree with themselves).
    @Test func randomPlacesAndDates_eventsInOrder_atTheirElevations() throws {
        var random = SplitMix(seed: 0x5EED_50)
        let utc = TimeZone(identifier: "UTC")!
        for _ in 0..<2000 {
            let here = SolarLocation(latitude: Double.random(in: -65...65, using: &random), longitude: Double.random(in: -180...180, using: &random))
            let day = Date(timeIntervalSince1970: Double.random(in: 946_684_800...2_208_988_800, using: &random))
            // A zone that follows the longitude, so the local day holds the whole solar day.
            let zone = TimeZone(secondsFromGMT: Int((here.longitude / 15).rounded()) * 3600) ?? utc
            let noon = try #require(SolarCalculator.time(of: .solarNoon, onDayOf: day, in: zone, here))
            let events = SolarCalculator.Event.allCases.map { SolarCalculator.time(of: $0, onDayOf: day, in: zone, here) }
            guard let dawn = events[0], let rise = events[1], let set = events[3], let dusk = events[4] else {
                // Only where a polar twilight is possible.
                #expect(abs(here.latitude) > 48, "\(here) on \(day): an event is missing")
                continue
            }
            #expect(dawn < rise && rise < noon && noon < set && set < dusk, "\(here) on \(day)")
            #expect(abs(SolarCalculator.elevation(at: rise, here) + 0.833) < 0.05, "\(here) \(day): sunrise elevation \(SolarCalculator.elevation(at: rise, here))")
            #expect(abs(SolarCalculator.elevation(at: set, here) + 0.833) < 0.05)
            #expect(abs(SolarCalculator.elevation(at: dawn, here) + 6) < 0.05)
            let top = SolarCalculator.elevation(at: noon, here)
            #expect(top >= SolarCalculator.elevation(at: noon.addingTimeInterval(-600), here) && top >= SolarCalculator.elevation(at: noon.addingTimeInterval(600), here))
        }
    }

    @Test func polarNightAndDay_haveNoEvent_andTheNextSunriseIsInJanuary() throws {
        let zone = TimeZone(identifier: "Europe/Oslo")!
        let tromso = SolarLocation(latitude: 69.6492, longitude: 18.9553)
        #expect(SolarCalculator.time(of: .sunrise, onDayOf: Self.day("2026-12-21", zone), in: zone, tromso) == nil, "polar night")
        #expect(SolarCalculator.time(of: .sunset, onDayOf: Self.day("2026-06-21", zone), in: zone, tromso) == nil, "midnight sun")
        #expect(SolarCalculator.time(of: .dawn, onDayOf: Self.day("2026-12-21", zone), in: zone, tromso) != nil, "civil twilight still comes")
        let next = try #require(SolarCalculator.next(.sunrise, after: Self.day("2026-12-01", zone), in: zone, tromso))
        let c = Calendar(identifier: .gregorian).dateComponents(in: zone, from: next)
        #expect(c.year == 2027 && c.month == 1 && (10...20).contains(c.day ?? 0), "the sun returns mid-January: \(next)")
        // The validator warns, listing the missing days.
        let compiler = {
            var c = AutomationCompiler(catalog: TestHome().core.catalog, state: TestHome().core.state)
            c.location = tromso
            c.timeZone = zone
            return c
        }()
        let issues = compiler.validate(try .json(Self.sunsetLamp(event: "sunrise")))
        #expect(issues.map(\.code) == ["sunEventMissing"])
        #expect(issues.first?.severity == .warning)
    }

    static func sunsetLamp(event: String = "sunset", offset: String = "-30m") -> String {
        """
        {"id": "dusk-lamp", "name": "Dusk lamp", "starters": [{"id": "sun", "sun": {"event": "\(event)", "offset": "\(offset)"}}],
         "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
        """
    }

    @Test func aSunStarterWithoutALocation_isRefused() async throws {
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock())
        let issues = await engine.validate(try .json(Self.sunsetLamp()))
        #expect(issues.map(\.code) == ["locationRequired"])
    }

    @Test func sunsetMinus30m_firesAtTheComputedInstant_andPlansTheNextDay() async throws {
        let zone = TimeZone(identifier: "Europe/Amsterdam")!
        let amsterdam = SolarLocation(latitude: 52.37, longitude: 4.90)
        let sunset = try #require(SolarCalculator.time(of: .sunset, onDayOf: Self.day("2026-06-01", zone), in: zone, amsterdam))
        #expect(Self.clock(sunset, zone).hasPrefix("21:"), "an Amsterdam June sunset: \(Self.clock(sunset, zone))")
        let due = sunset.addingTimeInterval(-1800)
        let h = TestHome()
        let clock = TestAutomationClock(epoch: due.addingTimeInterval(-60))
        let engine = AutomationEngine(core: h.core, clock: clock, timeZone: zone, location: amsterdam)
        let service = Task { await engine.run() }
        defer { service.cancel() }
        try await engine.save(.json(Self.sunsetLamp()), as: admin)
        await engine.start()
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(59))
        #expect(h.lampOn == false)
        clock.advance(.seconds(2))
        await engine.waitForTraces { $0["dusk-lamp"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
        let trace = try #require(try await engine.runs("dusk-lamp", as: admin).first)
        #expect(trace.cause.description.contains("sun sunset -30m"), "\(trace.cause.description)")
    }

    // MARK: - Against NOAA's own calculators (issue 18, T6: within 1 min of NOAA reference values)

    struct NOAAReference: Sendable, CustomStringConvertible {
        let source: String, latitude: Double, longitude: Double, utcOffsetHours: Double, date: String
        let sunrise: String, solarNoon: String, sunset: String
        /// How far from the published time is fine: 1 min (T6; NOAA states its sunrise and sunset
        /// accurate to a minute within ±72°). The gem takes the sun's position once, at noon;
        /// Hearth takes it at the event's instant, so their sunsets differ by some 40 s.
        let toleranceMinutes: Double
        var description: String { "\(source) \(date)" }
    }

    /// Published outputs of NOAA's sunrise/sunset procedure, each for the inputs as published
    /// (a fixed UTC offset, no daylight saving):
    /// - NOAA's calculator as an Excel/VBA workbook ("Calculation of local times of sunrise,
    ///   solar noon, and sunset based on the calculation procedure by NOAA
    ///   (http://www.srrb.noaa.gov/highlights/sunrise/sunrise.html)", published at
    ///   https://scribd.com/doc/171121478/Sunrise): latitude 18.580, longitude 72.400, 2012-05-22,
    ///   time zone 5.3 h → sunrise 5:52 AM, solar noon 12:25 PM, sunset 6:57 PM (rounded to the minute).
    /// - The Ruby `sun` gem's README (https://www.rubydoc.info/gems/sun/file/README.md), "a solar
    ///   calculator … based on the NOAA solar calculator": New York, 40.75, −73.99, 2015-01-01,
    ///   −05:00 → sunrise 07:20:02, solar noon 11:59:09, sunset 16:38:16.
    static let noaa: [NOAAReference] = [
        NOAAReference(
            source: "NOAA procedure workbook (scribd 171121478)", latitude: 18.58, longitude: 72.4, utcOffsetHours: 5.3, date: "2012-05-22",
            sunrise: "05:52", solarNoon: "12:25", sunset: "18:57", toleranceMinutes: 1),
        NOAAReference(
            source: "Ruby sun gem README (NOAA solar calculator)", latitude: 40.75, longitude: -73.99, utcOffsetHours: -5, date: "2015-01-01",
            sunrise: "07:20:02", solarNoon: "11:59:09", sunset: "16:38:16", toleranceMinutes: 1),
    ]

    @Test(arguments: noaa) func sunriseNoonAndSunset_matchNOAAsPublishedOutputs(_ r: NOAAReference) throws {
        let zone = try #require(TimeZone(secondsFromGMT: Int(r.utcOffsetHours * 3600)))
        let here = SolarLocation(latitude: r.latitude, longitude: r.longitude)
        let day = Self.day(r.date, zone)
        for (event, published) in [(SolarCalculator.Event.sunrise, r.sunrise), (.solarNoon, r.solarNoon), (.sunset, r.sunset)] {
            let t = try #require(SolarCalculator.time(of: event, onDayOf: day, in: zone, here))
            let off = abs(Self.minutes(Self.clock(t, zone)) - Self.minutes(published))
            #expect(off <= r.toleranceMinutes, "\(r): \(event) \(Self.clock(t, zone)), NOAA \(published) (\(off) min off)")
        }
    }

    /// NOAA's spreadsheet NOAA_Solar_Calculations_day.xls, as reproduced by pysunnoaa
    /// (https://pypi.org/project/pysunnoaa/, "All the calculation cells in row 2 of the spreadsheet
    /// are implemented"): latitude 40, longitude −105, time zone −6, 2010-06-21 09:54 → solar
    /// elevation without the refraction correction 47.346932081680364°.
    @Test func elevation_matchesNOAAsSpreadsheet() throws {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = try #require(TimeZone(secondsFromGMT: -6 * 3600))
        let at = try #require(c.date(from: DateComponents(year: 2010, month: 6, day: 21, hour: 9, minute: 54)))
        let elevation = SolarCalculator.elevation(at: at, SolarLocation(latitude: 40, longitude: -105))
        // The same equations: the same value to the last digits the page prints.
        #expect(abs(elevation - 47.346932081680364) < 1e-6, "elevation \(elevation), NOAA 47.346932081680364")
    }
}
