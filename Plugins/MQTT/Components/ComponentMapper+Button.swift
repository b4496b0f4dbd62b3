import DriverAPI
import HomeModel

/// The `button` component, for the one button Hearth maps: `device_class: identify`, the
/// firmware's own way to make the device show itself (zigbee2mqtt's Identify, ESPHome's
/// identify button). It adds the Identify trait to the device's primary type; `Identify`
/// publishes `payload_press`. A device without one does not advertise Identify: Hearth has no
/// other way to make an MQTT device blink.
extension ComponentMapper {
    mutating func identifyButton() throws(ComponentError) -> Entity {
        guard string("device_class") == "identify" else {
            throw ComponentError(
                "button '\(string("device_class") ?? "without a device_class")' is not supported (only device_class identify is)")
        }
        let topic = try require("command_topic")
        let press = string("payload_press") ?? "PRESS"
        var entity = base(nil, rank: 1000, [IdentifyTrait.identifier: [IdentifyTrait.Attribute.identifyTime: .int(0)]])
        let action = Action(publish: [Outgoing(topic: topic, payload: press)])
        entity.commands[CommandKey(trait: IdentifyTrait.identifier, command: IdentifyTrait.Command.identify)] = { _, _ throws in action }
        entity.commands[CommandKey(trait: IdentifyTrait.identifier, command: IdentifyTrait.Command.triggerEffect)] = { _, _ throws in action }
        return entity
    }
}
