import DriverAPI
import HomeModel
import Foundation

/// The `device_automation trigger` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    mutating func trigger() throws(ComponentError) -> Entity {
        guard string("automation_type") ?? "trigger" == "trigger" else {
            throw ComponentError("device_automation automation_type '\(string("automation_type") ?? "")' is not supported (only trigger)")
        }
        let triggerTopic = try require("topic")
        let type = string("type") ?? "action"
        let subtype = string("subtype") ?? ""
        let payload = string("payload")
        let position = Int(subtype.reversed().prefix { $0.isNumber }.reversed().map(String.init).joined()) ?? 1
        let kind = Mapping.pressKind(type: type, subtype: subtype)
        var entity = base(
            GenericSwitchDeviceType.identifier, rank: 90,
            [SwitchTrait.identifier: [SwitchTrait.Attribute.numberOfPositions: .int(2), SwitchTrait.Attribute.currentPosition: .int(0)]])
        entity.mergesWithSameType = true
        entity.switchPosition = max(1, min(position, 254))
        entity.key = topic.key
        if broken.contains("value_template") { return entity }
        let value = reader("value_template")
        let pos = Int64(max(1, min(position, 254)))
        entity.subscriptions.append(
            StateSubscription(topic: triggerTopic) { message throws(PayloadError) in
                if let payload, try value(message).templateText != payload { return [] }
                return Mapping.pressEvents(kind, position: pos)
            })
        return entity
    }
}
