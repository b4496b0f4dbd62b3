import DriverAPI
import HomeModel
import Foundation

/// The `binary_sensor` component (see the table on ``ComponentMapper``).
extension ComponentMapper {
    mutating func binarySensor() throws(ComponentError) -> Entity {
        let on = string("payload_on") ?? "ON"
        let off = string("payload_off") ?? "OFF"
        let deviceClass = string("device_class") ?? ""
        @Sendable func state(_ v: Value) throws(PayloadError) -> Bool {
            let text = v.templateText
            if text == on { return true }
            if text == off { return false }
            throw PayloadError("'\(text.prefix(40))' is neither payload_on '\(on)' nor payload_off '\(off)'")
        }
        var entity: Entity
        let read: @Sendable (Bool) -> [Update]
        switch deviceClass {
        case "door", "window", "opening", "garage_door", "":
            // Matter's Boolean State on a contact sensor is true when the contact is closed.
            let inverted = deviceClass != ""
            entity = base(ContactSensorDeviceType.identifier, rank: 70, [BooleanStateTrait.identifier: [:]])
            read = { [.attribute(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(inverted ? !$0 : $0))] }
        case "motion", "occupancy", "presence":
            entity = base(
                OccupancySensorDeviceType.identifier, rank: 71,
                [
                    OccupancySensingTrait.identifier: [
                        OccupancySensingTrait.Attribute.occupancySensorType: .int(0),
                        OccupancySensingTrait.Attribute.occupancySensorTypeBitmap: .int(1),
                    ]
                ])
            read = { [.attribute(OccupancySensingTrait.identifier, OccupancySensingTrait.Attribute.occupancy, .int($0 ? 1 : 0))] }
        case "moisture":
            entity = base(WaterLeakDetectorDeviceType.identifier, rank: 68, [BooleanStateTrait.identifier: [:]])
            read = { [.attribute(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool($0))] }
        case "smoke", "carbon_monoxide", "gas":
            let attribute = deviceClass == "smoke" ? SmokeCOAlarmTrait.Attribute.smokeState : SmokeCOAlarmTrait.Attribute.coState
            let expressed: Int64 = deviceClass == "smoke" ? 1 : 2
            entity = base(
                SmokeCOAlarmDeviceType.identifier, rank: 65,
                [SmokeCOAlarmTrait.identifier: [SmokeCOAlarmTrait.Attribute.expressedState: .int(0), attribute: .int(0)]])
            read = {
                [
                    .attribute(SmokeCOAlarmTrait.identifier, attribute, .int($0 ? 2 : 0)),
                    .attribute(SmokeCOAlarmTrait.identifier, SmokeCOAlarmTrait.Attribute.expressedState, .int($0 ? expressed : 0)),
                ]
            }
        default:
            throw ComponentError("binary_sensor device_class '\(deviceClass)' is not mapped to a Matter device type")
        }
        guard
            let sub = subscription(
                "state_topic", template: "value_template", { v, _ throws(PayloadError) in read(try state(v)) })
        else {
            throw ComponentError("binary_sensor needs a 'state_topic' and a supported value_template")
        }
        entity.subscriptions.append(sub)
        return entity
    }
}
