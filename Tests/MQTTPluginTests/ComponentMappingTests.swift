import DriverAPI
import DriverTesting
import HomeModel
import Testing
@testable import MQTTPlugin

/// Feeds vendors' discovery and state messages (from their public docs) through the pure
/// registry, with no broker, and checks the Matter device types, traits and values.
@Suite struct ComponentMappingTests {
    /// Runs a fixture through a connected registry; returns the host that recorded the effects.
    static func run(_ name: String, states: Bool = true) throws -> (TestHost, Registry) {
        let fixture = try Fixture(name)
        let host = TestHost(pluginID: "mqtt")
        var registry = Registry()
        apply(registry.connectionUp(), to: host)
        for item in fixture.discovery { apply(registry.receive(Message(topic: item.topic, text: item.payload)), to: host) }
        if states {
            for item in fixture.states { apply(registry.receive(Message(topic: item.topic, text: item.payload)), to: host) }
        }
        return (host, registry)
    }

    static func apply(_ effects: [Registry.Effect], to host: TestHost) {
        for effect in effects {
            switch effect {
            case .publish(let d): host.publish(d)
            case .remove(let id): host.remove(device: id)
            case .report(let r): host.report(r)
            case .emit(let e): host.emit(e)
            case .connectivity(let s, let d): host.setConnectivity(s, device: d)
            case .traitConnectivity(let s, let d, let t, let type): host.setConnectivity(s, device: d, trait: t, deviceType: type)
            case .log(let l, let m, let d): host.log(l, m, device: d)
            case .count(let name): host.count(name)
            case .subscribe, .unsubscribe: break
            }
        }
    }

    func types(_ d: DeviceDescription?) -> [DeviceTypeID] { d?.types.map(\.id) ?? [] }
    func primary(_ d: DeviceDescription?) -> DeviceTypeID? { d?.types.first(where: \.isPrimary)?.id }

    @Test func zigbee2mqttWeatherSensor_becomesOneDeviceWithThreeSensorTypesAndABattery() throws {
        let (host, registry) = try Self.run("zigbee2mqtt-aqara-weather")
        let id = "zigbee2mqtt_0x00158d0001a2b3c4"
        let d = host.devices[id]
        #expect(host.devices.count == 1)
        #expect(Set(types(d)) == [TemperatureSensorDeviceType.identifier, HumiditySensorDeviceType.identifier, PressureSensorDeviceType.identifier])
        #expect(primary(d) == TemperatureSensorDeviceType.identifier)
        #expect(d?.commission == nil, "discovered devices wait to be commissioned")
        #expect(d?.manufacturer == "Aqara")
        #expect(d?.name == "living_room_sensor")
        #expect(d?.types.first(where: \.isPrimary)?.traits[PowerSourceTrait.identifier] != nil)
        #expect(host.value(id, TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue) == .int(2137))
        #expect(host.value(id, RelativeHumidityMeasurementTrait.identifier, RelativeHumidityMeasurementTrait.Attribute.measuredValue) == .int(4852))
        #expect(host.value(id, PressureMeasurementTrait.identifier, PressureMeasurementTrait.Attribute.measuredValue) == .int(1012))
        #expect(host.value(id, PowerSourceTrait.identifier, PowerSourceTrait.Attribute.batPercentRemaining) == .int(182))
        #expect(host.connectivity(of: id) == .online)
        #expect(host.logLines.filter { $0.contains("linkquality") }.count == 1, "an unmapped sensor is reported once")
        #expect(registry.malformed.isEmpty)
    }

    @Test func zigbee2mqttDoor_reportsMatterContactSemantics() throws {
        let (host, _) = try Self.run("zigbee2mqtt-aqara-door")
        let id = "zigbee2mqtt_0x00158d000122fcd1"
        #expect(types(host.devices[id]) == [ContactSensorDeviceType.identifier])
        // contact: false is an open door; Matter's StateValue is true only when the contact is closed.
        #expect(host.value(id, BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(false))
    }

    @Test func zigbee2mqttMotion_reportsOccupancyAndLuxInTheSpecsLogForm() throws {
        let (host, _) = try Self.run("zigbee2mqtt-aqara-motion")
        let id = "zigbee2mqtt_0x00158d0001a9ec71"
        #expect(primary(host.devices[id]) == OccupancySensorDeviceType.identifier)
        #expect(Set(types(host.devices[id])) == [OccupancySensorDeviceType.identifier, LightSensorDeviceType.identifier])
        #expect(host.value(id, OccupancySensingTrait.identifier, OccupancySensingTrait.Attribute.occupancy) == .int(1))
        #expect(host.value(id, IlluminanceMeasurementTrait.identifier, IlluminanceMeasurementTrait.Attribute.measuredValue) == .int(25810))
    }

    @Test func zigbee2mqttBulb_isAColorTemperatureLightWithLevelsOnTheSpecScale() throws {
        let (host, _) = try Self.run("zigbee2mqtt-ikea-bulb")
        let id = "zigbee2mqtt_0x000d6ffffe123456"
        #expect(types(host.devices[id]) == [ColorTemperatureLightDeviceType.identifier])
        #expect(host.value(id, OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        #expect(host.value(id, LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel) == .int(254), "brightness 254 of 254")
        #expect(host.value(id, ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds) == .int(370))
        #expect(host.value(id, ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTempPhysicalMaxMireds) == .int(454))
    }

    @Test func zigbee2mqttButtonTriggers_mergeIntoOneGenericSwitchThatEmitsSwitchEvents() throws {
        let (host, _) = try Self.run("zigbee2mqtt-aqara-button")
        let id = "zigbee2mqtt_0x00158d000204a3e1"
        #expect(host.devices.count == 1)
        #expect(types(host.devices[id]) == [GenericSwitchDeviceType.identifier])
        #expect(host.events.map(\.event) == [
            SwitchTrait.Event.initialPress, SwitchTrait.Event.shortRelease, SwitchTrait.Event.multiPressComplete, SwitchTrait.Event.longPress,
        ])
        #expect(host.events[2].fields["TotalNumberOfPressesCounted"] == .int(2))
    }

    @Test func zigbee2mqttRadiatorValve_isAThermostat() throws {
        let (host, _) = try Self.run("zigbee2mqtt-tuya-trv")
        let id = "zigbee2mqtt_0x0c4314fffe2a1b2c"
        let t = ThermostatTrait.identifier
        #expect(types(host.devices[id]) == [ThermostatDeviceType.identifier])
        #expect(host.value(id, t, ThermostatTrait.Attribute.localTemperature) == .int(1980))
        #expect(host.value(id, t, ThermostatTrait.Attribute.occupiedHeatingSetpoint) == .int(2150))
        #expect(host.value(id, t, ThermostatTrait.Attribute.systemMode) == .int(4))
        #expect(host.value(id, t, ThermostatTrait.Attribute.absMinHeatSetpointLimit) == .int(500))
    }

    @Test func zigbee2mqttLeakAndSmoke_mapToTheirDetectors() throws {
        let (host, _) = try Self.run("zigbee2mqtt-leak-smoke")
        #expect(types(host.devices["zigbee2mqtt_0x00158d000405cfee"]) == [WaterLeakDetectorDeviceType.identifier])
        #expect(host.value("zigbee2mqtt_0x00158d000405cfee", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true))
        #expect(types(host.devices["zigbee2mqtt_0x00158d0003e1a2b3"]) == [SmokeCOAlarmDeviceType.identifier])
        #expect(host.value("zigbee2mqtt_0x00158d0003e1a2b3", SmokeCOAlarmTrait.identifier, SmokeCOAlarmTrait.Attribute.smokeState) == .int(0))
    }

    @Test func tasmotaPlug_expandsAbbreviationsAndBaseTopics() throws {
        let (host, _) = try Self.run("tasmota-s31")
        let d = host.devices["1C8A7B"]
        #expect(host.devices.count == 1)
        #expect(primary(d) == OnOffPlugInUnitDeviceType.identifier)
        #expect(Set(types(d)) == [
            OnOffPlugInUnitDeviceType.identifier, TemperatureSensorDeviceType.identifier, HumiditySensorDeviceType.identifier,
            GenericSwitchDeviceType.identifier,
        ])
        #expect(host.value("1C8A7B", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        #expect(host.value("1C8A7B", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue) == .int(2240))
        #expect(host.value("1C8A7B", RelativeHumidityMeasurementTrait.identifier, RelativeHumidityMeasurementTrait.Attribute.measuredValue) == .int(4130))
        #expect(host.events.first?.event == SwitchTrait.Event.initialPress)
        #expect(host.connectivity(of: "1C8A7B") == .online)
    }

    @Test func tasmotaDimmer_scalesBrightnessFromItsOwnScale() throws {
        let (host, _) = try Self.run("tasmota-dimmer")
        #expect(types(host.devices["2C3AE8"]) == [DimmableLightDeviceType.identifier])
        #expect(host.value("2C3AE8", LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel) == .int(Int64(Units.level(brightness: 128))))
    }

    @Test func esphomeNode_becomesOneDeviceWithEveryComponentAndTheLightPrimary() throws {
        let (host, _) = try Self.run("esphome-livingroom")
        let id = "240ac4123456"
        let d = host.devices[id]
        #expect(host.devices.count == 1)
        #expect(primary(d) == DimmableLightDeviceType.identifier)
        #expect(Set(types(d)) == [
            DimmableLightDeviceType.identifier, DoorLockDeviceType.identifier, WindowCoveringDeviceType.identifier, FanDeviceType.identifier,
            ContactSensorDeviceType.identifier, TemperatureSensorDeviceType.identifier,
        ])
        #expect(host.value(id, TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue) == .int(2281))
        #expect(host.value(id, BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true), "window OFF = closed = contact")
        #expect(host.value(id, LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel) == .int(Int64(Units.level(brightness: 128))))
        #expect(host.value(id, FanControlTrait.identifier, FanControlTrait.Attribute.fanMode) == .int(4))
        #expect(host.value(id, FanControlTrait.identifier, FanControlTrait.Attribute.percentCurrent) == .int(67), "speed 2 of 3")
        #expect(host.value(id, DoorLockTrait.identifier, DoorLockTrait.Attribute.lockState) == .int(1))
        #expect(host.value(id, WindowCoveringTrait.identifier, WindowCoveringTrait.Attribute.currentPositionLiftPercent100ths) == .int(2500),
            "75 % open is 25.00 % closed")
    }

    @Test func shellyTwoRelays_becomeTwoDevicesAndPlainPayloadsParse() throws {
        let (host, _) = try Self.run("shelly-gen1")
        let first = "e8db84d4c2a1"
        let second = "e8db84d4c2a1/shellyswitch25-D4C2A1-relay-1"
        #expect(host.value(first, OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        #expect(host.value(second, OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(false))
        #expect(host.devices[second]?.name == "Shelly 2.5 Relay 1")
        #expect(host.connectivity(of: first) == .online)
        #expect(host.value("shellyht-A1B2C3", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue) == .int(1975))
        #expect(host.value("shellydw2-F00D12", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true))
        #expect(host.value("shellydw2-F00D12", IlluminanceMeasurementTrait.identifier, IlluminanceMeasurementTrait.Attribute.measuredValue)
            == .int(Int64(Units.illuminanceValue(lux: 120))))
        #expect(host.events.map(\.event) == [SwitchTrait.Event.multiPressComplete], "only the SS trigger matches")
    }

    @Test(arguments: Fixture.all)
    func everyFixture_mapsWithoutRefusedPayloads(_ name: String) throws {
        let (host, registry) = try Self.run(name)
        #expect(!host.devices.isEmpty)
        #expect(registry.malformed.isEmpty, "\(registry.malformed)")
        for d in host.devices.values {
            #expect(d.types.filter(\.isPrimary).count == 1)
            for t in d.types { #expect(Catalog.standard.deviceType(t.id) != nil) }
        }
    }
}
