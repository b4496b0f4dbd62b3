import DriverAPI
import HomeModel
import Foundation

/// The `cover` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    mutating func cover() throws(ComponentError) -> Entity {
        let open = Double(int("position_open") ?? 100)
        let closed = Double(int("position_closed") ?? 0)
        guard open != closed else { throw ComponentError("cover position_open and position_closed are equal") }
        let states = (
            open: string("state_open") ?? "open", closed: string("state_closed") ?? "closed",
            opening: string("state_opening") ?? "opening", closing: string("state_closing") ?? "closing",
            stopped: string("state_stopped") ?? "stopped"
        )
        var entity = base(
            WindowCoveringDeviceType.identifier, rank: 40,
            [
                WindowCoveringTrait.identifier: [
                    WindowCoveringTrait.Attribute.type: .int(0), WindowCoveringTrait.Attribute.endProductType: .int(0),
                    WindowCoveringTrait.Attribute.configStatus: .int(0x1B), WindowCoveringTrait.Attribute.operationalStatus: .int(0),
                ]
            ])
        let trait = WindowCoveringTrait.identifier
        let lift = WindowCoveringTrait.Attribute.currentPositionLiftPercent100ths
        let status = WindowCoveringTrait.Attribute.operationalStatus
        // With a position topic, the reported position wins: `open` says only that the cover
        // has stopped (a cover 30 % open reports `open` too), as in Home Assistant.
        let positionReported = string("position_topic") != nil
        if let sub = subscription("state_topic", template: "value_template", { v, _ throws(PayloadError) in
            switch v.templateText {
            case states.open:
                return [.attribute(trait, status, .int(0))] + (positionReported ? [] : [.attribute(trait, lift, .int(0))])
            case states.closed:
                return [.attribute(trait, status, .int(0))] + (positionReported ? [] : [.attribute(trait, lift, .int(10000))])
            case states.opening: return [.attribute(trait, status, .int(0b0101))]
            case states.closing: return [.attribute(trait, status, .int(0b1010))]
            case states.stopped: return [.attribute(trait, status, .int(0))]
            case "", "None": return []
            case let other: throw PayloadError("cover state '\(other.prefix(40))' is none of \(states.open), \(states.closed), \(states.opening), \(states.closing), \(states.stopped)")
            }
        }) {
            entity.subscriptions.append(sub)
        }
        if let sub = subscription("position_topic", template: "position_template", { v, _ throws(PayloadError) in
            guard let p = Evaluator.number(v), p.isFinite else { throw PayloadError("cover position '\(v.templateText.prefix(40))' is not a number") }
            let fractionOpen = (p - closed) / (open - closed)
            guard (0...1).contains(fractionOpen) else {
                throw PayloadError("cover position \(p) is outside \(min(open, closed))…\(max(open, closed))")
            }
            return [.attribute(trait, lift, .int(Int64(Units.percent100ths(percent: (1 - fractionOpen) * 100))))]
        }) {
            entity.subscriptions.append(sub)
        }
        if entity.subscriptions.isEmpty { entity.optimistic = true }
        if let command = string("command_topic") {
            for (id, payload, assumed) in [
                (WindowCoveringTrait.Command.upOrOpen, string("payload_open") ?? "OPEN", Int64(0)),
                (WindowCoveringTrait.Command.downOrClose, string("payload_close") ?? "CLOSE", Int64(10000)),
                (WindowCoveringTrait.Command.stopMotion, string("payload_stop") ?? "STOP", Int64(-1)),
            ] {
                entity.commands[CommandKey(trait: trait, command: id)] = { _, _ throws in
                    Action(publish: [Outgoing(topic: command, payload: payload)], assumed: assumed < 0 ? [] : [.attribute(trait, lift, .int(assumed))])
                }
            }
        }
        if let setTopic = string("set_position_topic") {
            let template = broken.contains("set_position_template") ? nil : templates["set_position_template"]
            entity.commands[CommandKey(trait: trait, command: WindowCoveringTrait.Command.goToLiftPercentage)] = { args, _ throws in
                guard let v = (args["LiftPercent100thsValue"] ?? args["liftPercent100thsValue"])?.intValue, (0...10000).contains(v) else {
                    throw HomeError.invalidArgument("goToLiftPercentage needs liftPercent100thsValue between 0 and 10000")
                }
                let position = Int((closed + (1 - Double(v) / 10000) * (open - closed)).rounded())
                var payload = String(position)
                if let template {
                    do throws(TemplateError) {
                        payload = try template.render(Template.Variables(value: payload, json: nil, extra: ["position": .int(Int64(position))])).templateText
                    } catch {
                        throw HomeError.invalidArgument("set_position_template: \(error.message)")
                    }
                }
                return Action(publish: [Outgoing(topic: setTopic, payload: payload)], assumed: [.attribute(trait, lift, .int(v))])
            }
        }
        return entity
    }
}
