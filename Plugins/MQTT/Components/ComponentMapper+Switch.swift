import DriverAPI
import HomeModel
import Foundation

/// The `switch` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    mutating func switchEntity() throws(ComponentError) -> Entity {
        let payloadOn = string("payload_on") ?? "ON"
        let payloadOff = string("payload_off") ?? "OFF"
        let stateOn = string("state_on") ?? payloadOn
        let stateOff = string("state_off") ?? payloadOff
        var entity = base(OnOffPlugInUnitDeviceType.identifier, rank: 60, [OnOffTrait.identifier: [:]])
        if let sub = subscription("state_topic", template: "value_template", { v, _ throws(PayloadError) in
            [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(try Mapping.onOff(v, on: stateOn, off: stateOff)))]
        }) {
            entity.subscriptions.append(sub)
        } else {
            entity.optimistic = true
        }
        if let command = string("command_topic") {
            entity.commands.merge(Mapping.onOffCommands(topic: command, on: payloadOn, off: payloadOff)) { $1 }
        }
        return entity
    }
}
