#if canImport(Glibc)
import Glibc  // log10, pow; HomeModel avoids depending on Foundation
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Conversions between everyday units and the units Matter attributes are encoded in.
///
/// Traits carry values in the specification's units (Matter Application Cluster
/// Specification): a temperature is an `Int16` in 0.01 °C, a relative humidity a `UInt16` in
/// 0.01 %, and so on. Drivers use these helpers to turn a sensor reading into an attribute value;
/// clients use them to show one.
///
/// Conversions *to* an attribute value round to the nearest step and clamp to the range the
/// attribute allows, so a reading outside that range is reported as its nearest bound. A
/// non-finite input (NaN, ±∞) clamps too; NaN goes to the lower bound.
///
/// ```swift
/// let value = Units.temperatureValue(celsius: 21.5)   // 2150
/// Units.celsius(temperatureValue: value)               // 21.5
/// ```
public enum Units {
    // MARK: Temperature (Temperature Measurement §2.3, Thermostat §4.3)

    /// The lowest temperature value: absolute zero, −273.15 °C.
    public static let minimumTemperatureValue: Int16 = -27315

    /// A temperature attribute value (0.01 °C) for a temperature in degrees Celsius.
    ///
    /// `MeasuredValue = 100 × temperature [°C]`, clamped to −27315…32767.
    public static func temperatureValue(celsius: Double) -> Int16 {
        Int16(scaled(celsius * 100, in: Int64(minimumTemperatureValue)...Int64(Int16.max)))
    }

    /// Degrees Celsius for a temperature attribute value in 0.01 °C.
    public static func celsius(temperatureValue: Int16) -> Double { Double(temperatureValue) / 100 }

    // MARK: Relative humidity (Relative Humidity Measurement §2.6)

    /// A relative humidity attribute value (0.01 %) for a humidity in percent.
    ///
    /// `MeasuredValue = 100 × water content [%]`, clamped to 0…10000.
    public static func humidityValue(percent: Double) -> UInt16 {
        UInt16(scaled(percent * 100, in: 0...10_000))
    }

    /// Percent relative humidity for an attribute value in 0.01 %.
    public static func percent(humidityValue: UInt16) -> Double { Double(humidityValue) / 100 }

    // MARK: Illuminance (Illuminance Measurement §2.2)

    /// An illuminance `MeasuredValue` for an illuminance in lux.
    ///
    /// `MeasuredValue = 10,000 × log10(illuminance [lx]) + 1` for 1 lx … 3.576 Mlx, clamped to
    /// 1…0xFFFE. Below 1 lx the illuminance is too low to be measured, which the specification
    /// encodes as 0.
    public static func illuminanceValue(lux: Double) -> UInt16 {
        guard lux >= 1 else { return 0 }  // also NaN
        return UInt16(scaled(10_000 * log10(lux) + 1, in: 1...0xFFFE))
    }

    /// The illuminance in lux for a `MeasuredValue`; 0 when the value says "too low to measure".
    public static func lux(illuminanceValue: UInt16) -> Double {
        guard illuminanceValue > 0 else { return 0 }
        return pow(10, (Double(illuminanceValue) - 1) / 10_000)
    }

    // MARK: Pressure (Pressure Measurement §2.4)

    /// A pressure `MeasuredValue` (0.1 kPa) for a pressure in kilopascals.
    ///
    /// `MeasuredValue = 10 × pressure [kPa]`, clamped to −32767…32767.
    public static func pressureValue(kilopascals: Double) -> Int16 {
        Int16(scaled(kilopascals * 10, in: -32767...32767))
    }

    /// A pressure `MeasuredValue` (0.1 kPa) for a pressure in hectopascals (millibars):
    /// 1 hPa is 0.1 kPa, so the value is the reading in hPa, rounded.
    public static func pressureValue(hectopascals: Double) -> Int16 {
        Int16(scaled(hectopascals, in: -32767...32767))
    }

    /// Kilopascals for a pressure `MeasuredValue` in 0.1 kPa.
    public static func kilopascals(pressureValue: Int16) -> Double { Double(pressureValue) / 10 }

    /// Hectopascals (millibars) for a pressure `MeasuredValue` in 0.1 kPa.
    public static func hectopascals(pressureValue: Int16) -> Double { Double(pressureValue) }

    // MARK: Flow (Flow Measurement §2.5)

    /// A flow `MeasuredValue` (0.1 m³/h) for a flow in cubic metres per hour, clamped to 0…65534.
    public static func flowValue(cubicMetresPerHour: Double) -> UInt16 {
        UInt16(scaled(cubicMetresPerHour * 10, in: 0...65534))
    }

    /// Cubic metres per hour for a flow `MeasuredValue` in 0.1 m³/h.
    public static func cubicMetresPerHour(flowValue: UInt16) -> Double { Double(flowValue) / 10 }

    // MARK: Level (Level Control §1.6)

    /// A lighting level (1…254) for a brightness on the common 0…255 scale.
    ///
    /// Lighting device types use levels 1 (minimum) to 254 (maximum); 255 is null on the wire.
    /// Brightness 0 maps to level 1: turning a light off is the On/Off trait's job.
    public static func level(brightness: UInt8) -> UInt8 {
        UInt8(1 + (Double(brightness) * 253 / 255).rounded())
    }

    /// A brightness on the common 0…255 scale for a lighting level; levels outside 1…254 clamp.
    ///
    /// Every level survives the round trip `level(brightness: brightness(level: l)) == l`.
    public static func brightness(level: UInt8) -> UInt8 {
        let l = min(max(level, 1), 254)
        return UInt8((Double(l - 1) * 255 / 253).rounded())
    }

    // MARK: Colour temperature (Color Control §3.2)

    /// Mireds (micro reciprocal degrees) for a colour temperature in kelvin:
    /// `mireds = 1,000,000 / kelvin`, clamped to 1…0xFEFF (the ColorTemperatureMireds range).
    public static func mireds(kelvin: Double) -> UInt16 {
        guard kelvin > 0 else { return 0xFEFF }  // also NaN: the warmest representable
        return UInt16(scaled(1_000_000 / kelvin, in: 1...0xFEFF))
    }

    /// The colour temperature in kelvin for a value in mireds; 0 mireds gives infinity.
    public static func kelvin(mireds: UInt16) -> Double { 1_000_000 / Double(mireds) }

    // MARK: Percent (percent, percent100ths)

    /// A `percent100ths` value (0.01 %) for a percentage, clamped to 0…10000
    /// (Window Covering positions: 0 is fully open, 10000 fully closed).
    public static func percent100ths(percent: Double) -> UInt16 {
        UInt16(scaled(percent * 100, in: 0...10_000))
    }

    /// The percentage for a `percent100ths` value.
    public static func percent(percent100ths: UInt16) -> Double { Double(percent100ths) / 100 }

    /// Rounds to the nearest integer (half away from zero) and clamps into `range`.
    private static func scaled(_ x: Double, in range: ClosedRange<Int64>) -> Int64 {
        guard !x.isNaN else { return range.lowerBound }
        let r = x.rounded()
        if r <= Double(range.lowerBound) { return range.lowerBound }
        if r >= Double(range.upperBound) { return range.upperBound }
        return Int64(r)
    }
}
