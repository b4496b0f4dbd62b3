import HearthAPI
import HearthClient
import HomeModel
import Testing

/// What the CLI's tables print: readings in human units, from the spec's units.
@Suite struct DeviceReadingsTests {
    static func device(_ type: DeviceTypeID, _ trait: TraitID, _ value: Value) -> WireDevice {
        let snapshot = DeviceSnapshot(
            id: "t:x", name: "X", commissioning: .commissioned,
            types: [DeviceTypeState(id: type, isPrimary: true, traits: [trait: TraitState(id: trait, attributes: [0: value])])])
        return WireDevice(snapshot, catalog: .standard)
    }

    @Test(arguments: [
        (TemperatureSensorDeviceType.identifier, TemperatureMeasurementTrait.identifier, Value.int(2140), "Temperature", "21.4 °C"),
        (HumiditySensorDeviceType.identifier, RelativeHumidityMeasurementTrait.identifier, .int(4312), "Humidity", "43 %"),
        (ContactSensorDeviceType.identifier, BooleanStateTrait.identifier, .bool(false), "Contact", "Open"),
        (OccupancySensorDeviceType.identifier, OccupancySensingTrait.identifier, .int(1), "Motion", "Motion"),
        (DimmableLightDeviceType.identifier, LevelControlTrait.identifier, .int(127), "Level", "50 %"),
        (OnOffLightDeviceType.identifier, OnOffTrait.identifier, .bool(true), "Power", "On"),
        (DoorLockDeviceType.identifier, DoorLockTrait.identifier, .int(2), "Lock", "Unlocked"),
    ])
    func reading_in_human_units(type: DeviceTypeID, trait: TraitID, value: Value, label: String, text: String) {
        #expect(Self.device(type, trait, value).readings == [DeviceReading(label: label, text: text)])
    }

    @Test func an_unknown_temperature_is_a_dash_and_unknown_traits_say_nothing() {
        #expect(Self.device(TemperatureSensorDeviceType.identifier, TemperatureMeasurementTrait.identifier, .null).readings.map(\.text) == ["—"])
        #expect(Self.device(OnOffLightDeviceType.identifier, IdentifyTrait.identifier, .int(0)).readings.isEmpty)
    }
}
