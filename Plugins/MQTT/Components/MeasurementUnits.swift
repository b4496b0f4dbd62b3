import Foundation
import HomeModel

/// Home Assistant's units for electrical and air-quality sensors, and what they become in
/// Matter's units: Electrical Power/Energy Measurement count milliwatts, milliwatt-hours,
/// millivolts and milliamperes as signed 64-bit integers (at most ±2⁶², Matter 1.3 §2.13, §2.12);
/// the concentration clusters carry a float and a `MeasurementUnit` (§2.10).
enum ElectricalQuantity: String, Sendable, CaseIterable {
    case power, energy, voltage, current

    /// The factor from `unit` to the Matter unit (mW, mWh, mV, mA); nil for a unit this quantity
    /// does not have. An empty unit is the SI base unit (W, Wh, V, A).
    func factor(_ unit: String) -> Double? {
        switch (self, unit.trimmingCharacters(in: .whitespaces)) {
        case (.power, "mW"), (.energy, "mWh"), (.voltage, "mV"), (.current, "mA"): 1
        case (.power, "W"), (.power, ""), (.energy, "Wh"), (.energy, ""), (.voltage, "V"), (.voltage, ""), (.current, "A"),
            (.current, ""):
            1_000
        case (.power, "kW"), (.energy, "kWh"), (.voltage, "kV"): 1_000_000
        case (.power, "MW"), (.energy, "MWh"): 1_000_000_000
        case (.voltage, "µV"), (.voltage, "μV"), (.current, "µA"), (.current, "μA"): 0.001
        default: nil
        }
    }

    /// The units `factor` knows, for the message that refuses another.
    var units: String {
        switch self {
        case .power: "mW, W, kW, MW"
        case .energy: "mWh, Wh, kWh, MWh"
        case .voltage: "µV, mV, V, kV"
        case .current: "µA, mA, A"
        }
    }

    /// The Matter value for a reading in `factor`'s unit.
    /// - Throws: ``PayloadError`` for a reading outside ±2⁶² in the Matter unit (energy: 0…2⁶²).
    func value(_ x: Double, factor: Double) throws(PayloadError) -> Int64 {
        let scaled = (x * factor).rounded()
        let limit = 4_611_686_018_427_387_904.0  // 2^62, the zap files' bound
        let lower = self == .energy ? 0 : -limit
        guard scaled.isFinite, scaled >= lower, scaled <= limit else {
            throw PayloadError("\(rawValue) \(x.formatted) is outside what Matter's \(self == .energy ? "0…2⁶² mWh" : "±2⁶² milli-units") holds")
        }
        return Int64(scaled)
    }
}

/// The concentration clusters' `MeasurementUnitEnum` (Matter 1.3 §2.10.5.3) for HA's units.
enum ConcentrationUnit: Int64, Sendable {
    case ppm = 0, ppb = 1, ppt = 2, mgPerCubicMetre = 3, µgPerCubicMetre = 4, ngPerCubicMetre = 5, particlesPerCubicMetre = 6
    case becquerelPerCubicMetre = 7

    init?(homeAssistant unit: String) {
        switch unit.trimmingCharacters(in: .whitespaces) {
        case "ppm": self = .ppm
        case "ppb": self = .ppb
        case "ppt": self = .ppt
        case "mg/m³", "mg/m3": self = .mgPerCubicMetre
        case "µg/m³", "μg/m³", "µg/m3", "μg/m3", "ug/m3", "ug/m³": self = .µgPerCubicMetre
        case "ng/m³", "ng/m3": self = .ngPerCubicMetre
        case "p/m³", "p/m3": self = .particlesPerCubicMetre
        case "Bq/m³", "Bq/m3": self = .becquerelPerCubicMetre
        default: return nil
        }
    }
}
