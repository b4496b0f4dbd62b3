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
        default:
            throw ComponentError(
                "sensor device_class '\(deviceClass.isEmpty ? "(none)" : deviceClass)' is not mapped (mapped: temperature, humidity, illuminance, pressure, battery)")
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
}
