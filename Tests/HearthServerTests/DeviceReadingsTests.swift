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

    @Test func power_energy_and_concentrations_read_in_human_units() {
        func device(_ type: DeviceTypeID, _ trait: TraitID, _ attributes: [AttributeID: Value]) -> WireDevice {
            let snapshot = DeviceSnapshot(
                id: "t:x", name: "X", commissioning: .commissioned,
                types: [DeviceTypeState(id: type, isPrimary: true, traits: [trait: TraitState(id: trait, attributes: attributes)])])
            return WireDevice(snapshot, catalog: .standard)
        }
        let epm = ElectricalPowerMeasurementTrait.self
        #expect(device(ElectricalSensorDeviceType.identifier, epm.identifier, [epm.Attribute.activePower: .int(42_400)]).readings
            == [DeviceReading(label: "Power", text: "42.4 W")])
        let eem = ElectricalEnergyMeasurementTrait.self
        #expect(device(ElectricalSensorDeviceType.identifier, eem.identifier, [eem.Attribute.cumulativeEnergyImported: .object(["Energy": .int(1_510_000)])]).readings
            == [DeviceReading(label: "Energy", text: "1.51 kWh")])
        let co2 = CarbonDioxideConcentrationMeasurementTrait.self
        #expect(device(AirQualitySensorDeviceType.identifier, co2.identifier, [co2.Attribute.measuredValue: .double(612), co2.Attribute.measurementUnit: .int(0)]).readings
            == [DeviceReading(label: "CO₂", text: "612 ppm")])
    }

    @Test func an_unknown_temperature_is_a_dash_and_unknown_traits_say_nothing() {
        #expect(Self.device(TemperatureSensorDeviceType.identifier, TemperatureMeasurementTrait.identifier, .null).readings.map(\.text) == ["—"])
        #expect(Self.device(OnOffLightDeviceType.identifier, IdentifyTrait.identifier, .int(0)).readings.isEmpty)
    }
}
