public import Foundation

/// Where the home is, for sun starters and conditions (`location:` in hearth.yaml).
public struct SolarLocation: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// The sun's position and its daily events, computed locally with NOAA's solar equations
/// (the General Solar Position calculations behind NOAA's Solar Calculator, after Meeus,
/// *Astronomical Algorithms*): accurate to about a minute between ±72° latitude.
///
/// Sunrise and sunset are when the upper limb touches the horizon with standard refraction
/// (the centre 0.833° below it); dawn and dusk are civil twilight (6° below).
public enum SolarCalculator {
    public enum Event: String, Sendable, CaseIterable {
        case dawn, sunrise, solarNoon, sunset, dusk

        /// The sun's centre elevation at the event, in degrees (nil: solar noon).
        var elevation: Double? {
            switch self {
            case .dawn, .dusk: -6
            case .sunrise, .sunset: -0.833
            case .solarNoon: nil
            }
        }

        var isMorning: Bool { self == .dawn || self == .sunrise }
    }

    /// The sun at one instant: declination and equation of time (NOAA's spreadsheet columns).
    struct Position {
        /// Declination, degrees.
        let declination: Double
        /// Equation of time, minutes.
        let equationOfTime: Double

        init(at date: Date) {
            let julianDay = date.timeIntervalSince1970 / 86_400 + 2_440_587.5
            let t = (julianDay - 2_451_545) / 36_525  // Julian century
            let l0 = (280.46646 + t * (36_000.76983 + t * 0.0003032)).truncatingRemainder(dividingBy: 360)
            let m = 357.52911 + t * (35_999.05029 - 0.0001537 * t)
            let e = 0.016708634 - t * (0.000042037 + 0.0000001267 * t)
            let c = sin(rad(m)) * (1.914602 - t * (0.004817 + 0.000014 * t)) + sin(rad(2 * m)) * (0.019993 - 0.000101 * t)
                + sin(rad(3 * m)) * 0.000289
            let trueLongitude = l0 + c
            let omega = 125.04 - 1934.136 * t
            let apparentLongitude = trueLongitude - 0.00569 - 0.00478 * sin(rad(omega))
            let meanObliquity = 23 + (26 + (21.448 - t * (46.815 + t * (0.00059 - t * 0.001813))) / 60) / 60
            let obliquity = meanObliquity + 0.00256 * cos(rad(omega))
            declination = deg(asin(sin(rad(obliquity)) * sin(rad(apparentLongitude))))
            let y = pow(tan(rad(obliquity / 2)), 2)
            equationOfTime = 4 * deg(
                y * sin(2 * rad(l0)) - 2 * e * sin(rad(m)) + 4 * e * y * sin(rad(m)) * cos(2 * rad(l0))
                    - 0.5 * y * y * sin(4 * rad(l0)) - 1.25 * e * e * sin(2 * rad(m)))
        }
    }

    static func rad(_ d: Double) -> Double { d * .pi / 180 }
    static func deg(_ r: Double) -> Double { r * 180 / .pi }

    /// The sun's centre elevation (degrees, without refraction) at `date` seen from `location`.
    public static func elevation(at date: Date, _ location: SolarLocation) -> Double {
        let p = Position(at: date)
        let minutesUTC = date.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400) / 60
        let trueSolarTime = (minutesUTC + p.equationOfTime + 4 * location.longitude).truncatingRemainder(dividingBy: 1440)
        let hourAngle = trueSolarTime / 4 - 180
        let zenith = deg(acos(
            sin(rad(location.latitude)) * sin(rad(p.declination))
                + cos(rad(location.latitude)) * cos(rad(p.declination)) * cos(rad(hourAngle))))
        return 90 - zenith
    }

    /// The solar noon nearest to `near`.
    static func solarNoon(near: Date, _ location: SolarLocation) -> Date {
        var noon = near
        for _ in 0..<3 {
            let p = Position(at: noon)
            let minutes = 720 - 4 * location.longitude - p.equationOfTime  // UTC minutes of the day
            let dayStart = (noon.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
            var candidate = dayStart + minutes * 60
            // The one nearest to where we are looking.
            while candidate - noon.timeIntervalSince1970 > 43_200 { candidate -= 86_400 }
            while noon.timeIntervalSince1970 - candidate > 43_200 { candidate += 86_400 }
            noon = Date(timeIntervalSince1970: candidate)
        }
        return noon
    }

    /// The event on the local calendar day of `day` in `zone`; nil when the sun does not reach
    /// that elevation that day (polar day or night).
    public static func time(of event: Event, onDayOf day: Date, in zone: TimeZone, _ location: SolarLocation) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let start = calendar.startOfDay(for: day)
        let localNoon = calendar.date(byAdding: .hour, value: 12, to: start) ?? start.addingTimeInterval(43_200)
        let noon = solarNoon(near: localNoon, location)
        guard let target = event.elevation else { return noon }
        var at = noon
        for _ in 0..<4 {
            let p = Position(at: at)
            let lat = rad(location.latitude), dec = rad(p.declination)
            let cosH = (cos(rad(90 - target)) - sin(lat) * sin(dec)) / (cos(lat) * cos(dec))
            guard cosH.isFinite, (-1...1).contains(cosH) else { return nil }
            let hourAngleMinutes = 4 * deg(acos(cosH))
            let n = solarNoon(near: at, location)
            at = n.addingTimeInterval((event.isMorning ? -1 : 1) * hourAngleMinutes * 60)
        }
        return at
    }

    /// The first instant strictly after `after` of the event plus `offset` (seconds), looking at
    /// most `days` ahead (nil: none — the polar night has no sunrise for months).
    public static func next(
        _ event: Event, offset: TimeInterval = 0, after: Date, in zone: TimeZone, _ location: SolarLocation, days: Int = 370
    ) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        // Start a day early: a negative offset may pull tomorrow's event into today.
        var day = calendar.date(byAdding: .day, value: -1, to: calendar.startOfDay(for: after)) ?? after
        for _ in 0..<(days + 2) {
            if let t = time(of: event, onDayOf: day, in: zone, location)?.addingTimeInterval(offset), t > after { return t }
            guard let next = calendar.date(byAdding: .day, value: 1, to: day) else { return nil }
            day = next
        }
        return nil
    }

    /// The local dates (`2026-06-01`) in the `days` from `from` that have no such event.
    public static func missingDays(_ event: Event, from: Date, days: Int, in zone: TimeZone, _ location: SolarLocation) -> [String] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var day = calendar.startOfDay(for: from)
        var missing: [String] = []
        for _ in 0..<days {
            if time(of: event, onDayOf: day, in: zone, location) == nil {
                let c = calendar.dateComponents([.year, .month, .day], from: day)
                missing.append(String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0))
            }
            guard let next = calendar.date(byAdding: .day, value: 1, to: day) else { break }
            day = next
        }
        return missing
    }
}
