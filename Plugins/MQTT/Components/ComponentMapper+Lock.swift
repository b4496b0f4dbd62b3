import DriverAPI
import HomeModel
import Foundation

/// The `lock` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    mutating func lock() throws(ComponentError) -> Entity {
        let states: [String: Int64] = [
            string("state_locked") ?? "LOCKED": 1, string("state_unlocked") ?? "UNLOCKED": 2,
            string("state_locking") ?? "LOCKING": 0, string("state_unlocking") ?? "UNLOCKING": 0,
            string("state_jammed") ?? "JAMMED": 0, string("state_open") ?? "OPEN": 3,
        ]
        let trait = DoorLockTrait.identifier
        var entity = base(
            DoorLockDeviceType.identifier, rank: 20,
            [trait: [DoorLockTrait.Attribute.lockType: .int(0), DoorLockTrait.Attribute.actuatorEnabled: .bool(true), DoorLockTrait.Attribute.lockState: .null]])
        if let sub = subscription("state_topic", template: "value_template", { v, _ throws(PayloadError) in
            guard let state = states[v.templateText] else {
                throw PayloadError("lock state '\(v.templateText.prefix(40))' is none of \(states.keys.sorted().joined(separator: ", "))")
            }
            return [.attribute(trait, DoorLockTrait.Attribute.lockState, .int(state))]
        }) {
            entity.subscriptions.append(sub)
        } else {
            entity.optimistic = true
        }
        let command = try require("command_topic")
        for (id, payload, state) in [
            (DoorLockTrait.Command.lockDoor, string("payload_lock") ?? "LOCK", Int64(1)),
            (DoorLockTrait.Command.unlockDoor, string("payload_unlock") ?? "UNLOCK", Int64(2)),
        ] {
            entity.commands[CommandKey(trait: trait, command: id)] = { _, _ throws in
                Action(publish: [Outgoing(topic: command, payload: payload)], assumed: [.attribute(trait, DoorLockTrait.Attribute.lockState, .int(state))])
            }
        }
        return entity
    }
}
