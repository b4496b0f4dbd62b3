import DriverAPI
import HomeCore
import HomeModel
import Testing

/// A driver's configuration can place a device on first sight (`DeviceDescription.commission`):
/// the GPIO and MQTT plugins rely on it for devices named in `hearth.yaml`.
@Suite struct CommissionHintTests {
    func contactSensor(_ localID: String, hint: CommissionHint?) -> DeviceDescription {
        DeviceDescription(
            localID: localID, name: "Contact \(localID)",
            types: [
                DeviceTypeDescription(
                    id: ContactSensorDeviceType.identifier, isPrimary: true,
                    traits: [BooleanStateTrait.identifier: [BooleanStateTrait.Attribute.stateValue: .bool(false)]])
            ], commission: hint)
    }

    @Test func commissionsIntoNamedRoom_whenHintIsValid() async throws {
        let core = HomeCore()
        let context = core.context(for: "gpio")
        context.publish(contactSensor("door", hint: CommissionHint(name: "Front door", room: "Hallway")))
        let home = core.home(for: .system)
        let devices = try await home.devices().list()
        let door = try #require(devices.first { $0.id == DeviceID(plugin: "gpio", local: "door") })
        #expect(door.name == "Front door")
        let rooms = try await home.rooms().list()
        #expect(rooms.first { $0.id == door.roomID }?.name == "Hallway")
        #expect(try await home.discoveredDevices().list().isEmpty)
    }

    @Test func staysDiscovered_whenHintNameBreaksNamingRules() async throws {
        let core = HomeCore()
        core.context(for: "gpio").publish(contactSensor("door", hint: CommissionHint(name: "-- bad --", room: "Hallway")))
        let home = core.home(for: .system)
        #expect(try await home.devices().list().isEmpty)
        #expect(try await home.discoveredDevices().list().map(\.id) == [DeviceID(plugin: "gpio", local: "door")])
        #expect(core.rejectedInputCount == 1)
    }
}
