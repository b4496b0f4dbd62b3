import Foundation
public import HearthAPI
import HomeModel

/// One reading of a device in human units, as the web page shows it (`Temperature 21.4 °C`).
public struct DeviceReading: Hashable, Sendable {
    public let label: String
    public let text: String
    public init(label: String, text: String) {
        self.label = label
        self.text = text
    }
}

extension WireDevice {
    /// The device's readings in human units — temperature in °C, humidity and level in %,
    /// Open/Closed, Motion/No motion, On/Off, the lock state — one per trait, in the order of
    /// its types. The rules are those of the web page (`Web/present.js`); `--json` and the
    /// API keep the specification's units.
    public var readings: [DeviceReading] {
        var out: [DeviceReading] = []
        var seen: Set<TraitID> = []
        for type in types {
            for trait in type.traits where seen.insert(trait.id).inserted {
                if let reading = Self.measurementReading(trait) {
                    out.append(reading)
                    continue
                }
                let value = trait.attributes.first { $0.id == 0 }?.value
                if let reading = Self.reading(trait: trait.id, type: type.id, value: value) { out.append(reading) }
            }
        }
        return out
    }

    /// The primary type's name (`On/Off Light`).
    public var primaryTypeName: String { types.first(where: \.isPrimaryType)?.name ?? primaryType?.hex ?? "-" }

    static func reading(trait: TraitID, type: DeviceTypeID, value: Value?) -> DeviceReading? {
        let number = value?.doubleValue
        switch trait {
        case OnOffTrait.identifier:
            guard let on = value?.boolValue else { return nil }
            return DeviceReading(label: "Power", text: on ? "On" : "Off")
        case LevelControlTrait.identifier:
            guard let n = number else { return nil }
            return DeviceReading(label: "Level", text: "\(Int((n / 254 * 100).rounded())) %")
        case TemperatureMeasurementTrait.identifier:
            return DeviceReading(label: "Temperature", text: number.map { format($0 / 100, digits: 1) + " °C" } ?? "—")
        case RelativeHumidityMeasurementTrait.identifier:
            return DeviceReading(label: "Humidity", text: number.map { format($0 / 100, digits: 0) + " %" } ?? "—")
        case BooleanStateTrait.identifier:
            guard let v = value?.boolValue else { return nil }
            switch type {
            case ContactSensorDeviceType.identifier: return DeviceReading(label: "Contact", text: v ? "Closed" : "Open")
            case WaterLeakDetectorDeviceType.identifier: return DeviceReading(label: "Leak", text: v ? "Leak!" : "Dry")
            default: return DeviceReading(label: "State", text: v ? "Detected" : "Clear")
            }
        case OccupancySensingTrait.identifier:
            let occupied: Bool? = value?.intValue.map { $0 & 1 == 1 } ?? value?.boolValue
            guard let occupied else { return nil }
            return DeviceReading(label: "Motion", text: occupied ? "Motion" : "No motion")
        case DoorLockTrait.identifier:
            let text = [0: "Not fully locked", 1: "Locked", 2: "Unlocked", 3: "Unlatched"][value?.intValue ?? -1] ?? "Unknown"
            return DeviceReading(label: "Lock", text: text)
        default:
            return nil
        }
    }

    /// Electrical and concentration readings, whose value is not attribute 0: power in W
    /// (`ActivePower`, mW), energy in kWh (`CumulativeEnergyImported.Energy`, mWh), and a
    /// concentration in its `MeasurementUnit`.
    static func measurementReading(_ trait: WireTrait) -> DeviceReading? {
        func value(_ id: AttributeID) -> Value? { trait.attributes.first { $0.id == id }?.value }
        switch trait.id {
        case ElectricalPowerMeasurementTrait.identifier:
            let mW = value(ElectricalPowerMeasurementTrait.Attribute.activePower)?.doubleValue
            return DeviceReading(label: "Power", text: mW.map { format($0 / 1000, digits: 1) + " W" } ?? "—")
        case ElectricalEnergyMeasurementTrait.identifier:
            let mWh = value(ElectricalEnergyMeasurementTrait.Attribute.cumulativeEnergyImported)?.objectValue?["Energy"]?.doubleValue
            return DeviceReading(label: "Energy", text: mWh.map { format($0 / 1_000_000, digits: 2) + " kWh" } ?? "—")
        case CarbonDioxideConcentrationMeasurementTrait.identifier, PM25ConcentrationMeasurementTrait.identifier,
            PM10ConcentrationMeasurementTrait.identifier, TotalVolatileOrganicCompoundsConcentrationMeasurementTrait.identifier:
            typealias C = CarbonDioxideConcentrationMeasurementTrait.Attribute  // shared by every concentration cluster
            let label = [
                CarbonDioxideConcentrationMeasurementTrait.identifier: "CO₂", PM25ConcentrationMeasurementTrait.identifier: "PM2.5",
                PM10ConcentrationMeasurementTrait.identifier: "PM10",
            ][trait.id] ?? "TVOC"
            let units = ["ppm", "ppb", "ppt", "mg/m³", "µg/m³", "ng/m³", "p/m³", "Bq/m³"]
            let unit = value(C.measurementUnit)?.intValue.flatMap { units.indices.contains(Int($0)) ? units[Int($0)] : nil } ?? ""
            let x = value(C.measuredValue)?.doubleValue
            return DeviceReading(label: label, text: x.map { format($0, digits: 0) + (unit.isEmpty ? "" : " " + unit) } ?? "—")
        default:
            return nil
        }
    }

    static func format(_ n: Double, digits: Int) -> String {
        String(format: "%.\(digits)f", n)
    }
}
