import DriverAPI
import HomeModel
import Foundation

/// The `fan` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    mutating func fan() throws(ComponentError) -> Entity {
        let payloadOn = string("payload_on") ?? "ON"
        let payloadOff = string("payload_off") ?? "OFF"
        let low = Double(int("speed_range_min") ?? 1)
        let high = Double(int("speed_range_max") ?? 100)
        guard high > low else { throw ComponentError("fan speed_range_max must be above speed_range_min") }
        let fanTrait = FanControlTrait.identifier
        var entity = base(
            FanDeviceType.identifier, rank: 50,
            [
                fanTrait: [FanControlTrait.Attribute.fanModeSequence: .int(2), FanControlTrait.Attribute.percentSetting: .null],
                OnOffTrait.identifier: [:],
            ])
        if let sub = subscription("state_topic", template: "state_value_template", { v, _ throws(PayloadError) in
            let on = try Mapping.onOff(v, on: payloadOn, off: payloadOff)
            var updates: [Update] = [
                .attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on)),
                .attribute(fanTrait, FanControlTrait.Attribute.fanMode, .int(on ? 4 : 0)),
            ]
            if !on { updates.append(.attribute(fanTrait, FanControlTrait.Attribute.percentCurrent, .int(0))) }
            return updates
        }) {
            entity.subscriptions.append(sub)
        } else {
            entity.optimistic = true
        }
        if let sub = subscription("percentage_state_topic", template: "percentage_value_template", { v, _ throws(PayloadError) in
            guard let speed = Evaluator.number(v), speed.isFinite else { throw PayloadError("fan percentage '\(v.templateText.prefix(40))' is not a number") }
            guard speed == 0 || (low...high).contains(speed) else { throw PayloadError("fan speed \(speed) is outside \(low)…\(high)") }
            let percent = speed == 0 ? 0 : Int64(((speed - low + 1) / (high - low + 1) * 100).rounded())
            return [.attribute(fanTrait, FanControlTrait.Attribute.percentCurrent, .int(percent))]
        }) {
            entity.subscriptions.append(sub)
        }
        let command = try require("command_topic")
        entity.commands.merge(Mapping.onOffCommands(topic: command, on: payloadOn, off: payloadOff)) { $1 }
        let percentTopic = string("percentage_command_topic")
        entity.writes[WriteKey(trait: fanTrait, attribute: FanControlTrait.Attribute.fanMode)] = { args, _ throws in
            guard let mode = args["value"]?.intValue, (0...6).contains(mode) else { throw HomeError.invalidArgument("fanMode must be 0…6") }
            return Action(publish: [Outgoing(topic: command, payload: mode == 0 ? payloadOff : payloadOn)],
                assumed: [.attribute(fanTrait, FanControlTrait.Attribute.fanMode, .int(mode == 0 ? 0 : 4))])
        }
        if let percentTopic {
            entity.writes[WriteKey(trait: fanTrait, attribute: FanControlTrait.Attribute.percentSetting)] = { args, _ throws in
                guard let p = args["value"]?.intValue, (0...100).contains(p) else { throw HomeError.invalidArgument("percentSetting must be 0…100") }
                let speed = p == 0 ? 0 : Int((low - 1 + Double(p) / 100 * (high - low + 1)).rounded())
                return Action(publish: [Outgoing(topic: percentTopic, payload: String(max(speed, p == 0 ? 0 : Int(low))))],
                    assumed: [.attribute(fanTrait, FanControlTrait.Attribute.percentSetting, .int(p))])
            }
        }
        return entity
    }
}
