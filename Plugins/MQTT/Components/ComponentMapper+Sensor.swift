import DriverAPI
import HomeModel
import Foundation

/// The `sensor` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    mutating func sensor() throws(ComponentError) -> Entity {
        let deviceClass = string("device_class") ?? ""
        let unit = string("unit_of_measurement") ?? ""
        var entity: Entity
        let convert: @Sendable (Double) throws(PayloadError) -> [Update]
        switch deviceClass {
        case "temperature":
            entity = base(TemperatureSensorDeviceType.identifier, rank: 80, [TemperatureMeasurementTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                [.attribute(TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue,
                    .int(Int64(try Mapping.temperature(x, unit: unit))))]
            }
        case "humidity":
            entity = base(HumiditySensorDeviceType.identifier, rank: 81, [RelativeHumidityMeasurementTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                guard (0...100).contains(x) else { throw PayloadError("humidity \(x) % is outside 0…100 %") }
                return [.attribute(RelativeHumidityMeasurementTrait.identifier, RelativeHumidityMeasurementTrait.Attribute.measuredValue,
                    .int(Int64(Units.humidityValue(percent: x))))]
            }
        case "illuminance":
            entity = base(LightSensorDeviceType.identifier, rank: 83, [IlluminanceMeasurementTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                guard x >= 0, x <= 3_576_000 else { throw PayloadError("illuminance \(x) lx is outside 0…3,576,000 lx") }
                return [.attribute(IlluminanceMeasurementTrait.identifier, IlluminanceMeasurementTrait.Attribute.measuredValue,
                    .int(Int64(Units.illuminanceValue(lux: x))))]
            }
        case "pressure", "atmospheric_pressure":
            entity = base(PressureSensorDeviceType.identifier, rank: 82, [PressureMeasurementTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                [.attribute(PressureMeasurementTrait.identifier, PressureMeasurementTrait.Attribute.measuredValue,
                    .int(Int64(try Mapping.pressure(x, unit: unit))))]
            }
        case "battery":
            entity = base(nil, rank: 100, [PowerSourceTrait.identifier: [:]])
            convert = { x throws(PayloadError) in [try Mapping.battery(x)] }
        case "voltage" where unit.trimmingCharacters(in: .whitespaces) == "mV":
            // A battery's cell voltage: zigbee2mqtt's battery devices report `voltage` in mV
            // ("Voltage of the battery in millivolts"); mains meters report volts.
            entity = base(nil, rank: 100, [PowerSourceTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                guard x >= 0, x <= Double(UInt32.max) else { throw PayloadError("battery voltage \(x.formatted) mV is outside 0…4294967295 mV") }
                return [.attribute(PowerSourceTrait.identifier, PowerSourceTrait.Attribute.batVoltage, .int(Int64(x.rounded())))]
            }
        case "power", "energy", "voltage", "current":
            (entity, convert) = try electrical(ElectricalQuantity(rawValue: deviceClass)!, unit: unit)
        case "carbon_dioxide", "pm25", "pm10", "volatile_organic_compounds", "volatile_organic_compounds_parts":
            (entity, convert) = try concentration(deviceClass, unit: unit)
        default:
            throw ComponentError(
                "sensor device_class '\(deviceClass.isEmpty ? "(none)" : deviceClass)' is not mapped (mapped: \(Self.mappedSensorClasses))")
        }
        guard
            let sub = subscription("state_topic", template: "value_template", { v, _ throws(PayloadError) in
                guard let x = Evaluator.number(v), x.isFinite else {
                    throw PayloadError("'\(v.templateText.prefix(40))' is not a number")
                }
                return try convert(x)
            })
        else { throw ComponentError("sensor needs a 'state_topic' and a supported value_template") }
        entity.subscriptions.append(sub)
        return entity
    }

    static let mappedSensorClasses =
        "temperature, humidity, illuminance, pressure, atmospheric_pressure, battery, power, energy, voltage, current, carbon_dioxide, pm25, pm10, volatile_organic_compounds, volatile_organic_compounds_parts"

    /// A power, energy, voltage or current sensor: Electrical Sensor with Electrical Power
    /// Measurement (`ActivePower`, `Voltage`, `ActiveCurrent`) or Electrical Energy Measurement
    /// (`CumulativeEnergyImported`). The entities of one device merge into one Electrical Sensor
    /// unless two measure the same quantity (the channels of a Shelly 2.5).
    func electrical(_ quantity: ElectricalQuantity, unit: String) throws(ComponentError)
        -> (Entity, @Sendable (Double) throws(PayloadError) -> [Update])
    {
        guard let factor = quantity.factor(unit) else {
            throw ComponentError("sensor \(quantity.rawValue) unit '\(unit)' is not mapped (mapped: \(quantity.units))")
        }
        let epm = ElectricalPowerMeasurementTrait.identifier
        let eem = ElectricalEnergyMeasurementTrait.identifier
        let trait = quantity == .energy ? eem : epm
        var entity = base(ElectricalSensorDeviceType.identifier, rank: 88, [PowerTopologyTrait.identifier: [:], trait: [:]])
        entity.mergesWithSameType = true
        entity.measures = quantity.rawValue
        let convert: @Sendable (Double) throws(PayloadError) -> [Update] = { x throws(PayloadError) in
            let v = try quantity.value(x, factor: factor)
            switch quantity {
            case .power: return [.attribute(epm, ElectricalPowerMeasurementTrait.Attribute.activePower, .int(v))]
            case .voltage: return [.attribute(epm, ElectricalPowerMeasurementTrait.Attribute.voltage, .int(v))]
            case .current: return [.attribute(epm, ElectricalPowerMeasurementTrait.Attribute.activeCurrent, .int(v))]
            case .energy:
                // EnergyMeasurementStruct: field 0 `Energy` in mWh.
                return [.attribute(eem, ElectricalEnergyMeasurementTrait.Attribute.cumulativeEnergyImported, .object(["Energy": .int(v)]))]
            }
        }
        return (entity, convert)
    }

    /// A CO₂, PM2.5, PM10 or TVOC sensor: Air Quality Sensor with the concentration trait
    /// (`MeasuredValue` as a float, `MeasurementUnit` from HA's unit, `MeasurementMedium` air).
    /// Air Quality's own `AirQuality` stays `Unknown`: HA sends no index to derive it from.
    func concentration(_ deviceClass: String, unit: String) throws(ComponentError)
        -> (Entity, @Sendable (Double) throws(PayloadError) -> [Update])
    {
        let trait: TraitID
        switch deviceClass {
        case "carbon_dioxide": trait = CarbonDioxideConcentrationMeasurementTrait.identifier
        case "pm25": trait = PM25ConcentrationMeasurementTrait.identifier
        case "pm10": trait = PM10ConcentrationMeasurementTrait.identifier
        default: trait = TotalVolatileOrganicCompoundsConcentrationMeasurementTrait.identifier
        }
        let defaultUnit = ["carbon_dioxide": "ppm", "volatile_organic_compounds_parts": "ppb"][deviceClass] ?? "µg/m³"
        guard let measurementUnit = ConcentrationUnit(homeAssistant: unit.isEmpty ? defaultUnit : unit) else {
            throw ComponentError("sensor \(deviceClass) unit '\(unit)' is not mapped (mapped: ppm, ppb, ppt, mg/m³, µg/m³, ng/m³, p/m³, Bq/m³)")
        }
        typealias C = CarbonDioxideConcentrationMeasurementTrait.Attribute  // every concentration cluster shares these IDs
        var entity = base(
            AirQualitySensorDeviceType.identifier, rank: 78,
            [
                AirQualityTrait.identifier: [AirQualityTrait.Attribute.airQuality: .int(0)],
                trait: [C.measurementUnit: .int(measurementUnit.rawValue), C.measurementMedium: .int(0)],
            ])
        entity.mergesWithSameType = true
        entity.measures = deviceClass
        let convert: @Sendable (Double) throws(PayloadError) -> [Update] = { x throws(PayloadError) in
            guard x >= 0, x <= Double(Float.greatestFiniteMagnitude) else {
                throw PayloadError("\(deviceClass) \(x.formatted) is not a concentration (0 or more)")
            }
            return [.attribute(trait, C.measuredValue, .double(x))]
        }
        return (entity, convert)
    }
}
