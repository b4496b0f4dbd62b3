import DriverAPI
import HomeModel
import Foundation

/// The `climate` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    static let systemModes: [String: Int64] = ["off": 0, "auto": 1, "heat_cool": 1, "cool": 3, "heat": 4, "fan_only": 7, "dry": 8]

    mutating func climate() throws(ComponentError) -> Entity {
        let unit = string("temperature_unit") ?? "C"
        let modes = config["modes"]?.listValue?.compactMap(\.stringValue) ?? ["auto", "off", "cool", "heat", "dry", "fan_only"]
        let heats = modes.contains("heat") || modes.contains("auto") || modes.contains("heat_cool")
        let cools = modes.contains("cool") || modes.contains("heat_cool")
        let trait = ThermostatTrait.identifier
        var attributes: [AttributeID: Value] = [
            ThermostatTrait.Attribute.localTemperature: .null,
            ThermostatTrait.Attribute.controlSequenceOfOperation: .int(heats && cools ? 4 : (cools ? 0 : 2)),
            ThermostatTrait.Attribute.systemMode: .int(modes.contains("heat") ? 4 : 1),
        ]
        if let lo = double("min_temp"), let v = try? Mapping.temperature(lo, unit: unit) {
            attributes[ThermostatTrait.Attribute.absMinHeatSetpointLimit] = .int(Int64(v))
        }
        if let hi = double("max_temp"), let v = try? Mapping.temperature(hi, unit: unit) {
            attributes[ThermostatTrait.Attribute.absMaxHeatSetpointLimit] = .int(Int64(v))
        }
        var entity = base(ThermostatDeviceType.identifier, rank: 30, [trait: attributes])
        var setpoints: [AttributeID] = []
        if heats { setpoints.append(ThermostatTrait.Attribute.occupiedHeatingSetpoint) }
        if cools { setpoints.append(ThermostatTrait.Attribute.occupiedCoolingSetpoint) }
        let setpointAttributes = setpoints
        if let sub = subscription("current_temperature_topic", template: "current_temperature_template", { v, _ throws(PayloadError) in
            guard let x = Evaluator.number(v), x.isFinite else { throw PayloadError("current temperature '\(v.templateText.prefix(40))' is not a number") }
            return [.attribute(trait, ThermostatTrait.Attribute.localTemperature, .int(Int64(try Mapping.temperature(x, unit: unit))))]
        }) {
            entity.subscriptions.append(sub)
        }
        if let sub = subscription("temperature_state_topic", template: "temperature_state_template", { v, _ throws(PayloadError) in
            guard let x = Evaluator.number(v), x.isFinite else { throw PayloadError("setpoint '\(v.templateText.prefix(40))' is not a number") }
            let value = Int64(try Mapping.temperature(x, unit: unit))
            return setpointAttributes.map { .attribute(trait, $0, .int(value)) }
        }) {
            entity.subscriptions.append(sub)
        }
        if let sub = subscription("mode_state_topic", template: "mode_state_template", { v, _ throws(PayloadError) in
            guard let mode = Self.systemModes[v.templateText] else {
                throw PayloadError("climate mode '\(v.templateText.prefix(40))' is none of \(Self.systemModes.keys.sorted().joined(separator: ", "))")
            }
            return [.attribute(trait, ThermostatTrait.Attribute.systemMode, .int(mode))]
        }) {
            entity.subscriptions.append(sub)
        }
        if entity.subscriptions.isEmpty { entity.optimistic = true }
        @Sendable func format(_ value: Int) -> String {
            let celsius = Double(value) / 100
            let out = unit.uppercased().hasPrefix("F") ? celsius * 9 / 5 + 32 : celsius
            return String((out * 10).rounded() / 10)
        }
        if let temperatureTopic = string("temperature_command_topic") {
            let write: CommandHandler = { args, _ throws in
                guard let v = args["value"]?.intValue, (-27315...32767).contains(v) else {
                    throw HomeError.invalidArgument("a setpoint is a temperature in 0.01 °C")
                }
                return Action(publish: [Outgoing(topic: temperatureTopic, payload: format(Int(v)))],
                    assumed: setpointAttributes.map { .attribute(trait, $0, .int(v)) })
            }
            for attribute in setpointAttributes { entity.writes[WriteKey(trait: trait, attribute: attribute)] = write }
            entity.commands[CommandKey(trait: trait, command: ThermostatTrait.Command.setpointRaiseLower)] = { args, current throws in
                guard let amount = (args["Amount"] ?? args["amount"])?.intValue, (-127...127).contains(amount) else {
                    throw HomeError.invalidArgument("setpointRaiseLower needs amount between -127 and 127 (0.1 °C steps)")
                }
                guard let attribute = setpointAttributes.first, let now = current[trait, attribute]?.intValue else {
                    throw HomeError.unsupportedOperation("the thermostat has not reported its setpoint yet")
                }
                return try write(["value": .int(now + amount * 10)], current)
            }
        }
        if let modeTopic = string("mode_command_topic") {
            entity.writes[WriteKey(trait: trait, attribute: ThermostatTrait.Attribute.systemMode)] = { args, _ throws in
                guard let v = args["value"]?.intValue,
                    let name = Self.systemModes.filter({ $0.value == v && modes.contains($0.key) }).keys.sorted().first
                else { throw HomeError.invalidArgument("systemMode \(args["value"] ?? .null) is not one of this thermostat's modes (\(modes.joined(separator: ", ")))") }
                return Action(publish: [Outgoing(topic: modeTopic, payload: name)], assumed: [.attribute(trait, ThermostatTrait.Attribute.systemMode, .int(v))])
            }
        }
        return entity
    }
}
