import DriverAPI
import DriverTesting
import HomeModel
import Testing
@testable import MQTTPlugin

/// Power, energy, voltage and current sensors become Electrical Power/Energy Measurement;
/// CO₂, PM2.5, PM10 and TVOC the concentration measurement clusters (#14), from the vendors'
/// own discovery messages (fixtures in `Fixtures/`).
@Suite struct EnergyAndAirQualityTests {
    typealias EPM = ElectricalPowerMeasurementTrait
    typealias EEM = ElectricalEnergyMeasurementTrait
    typealias Concentration = CarbonDioxideConcentrationMeasurementTrait.Attribute

    func types(_ d: DeviceDescription?) -> Set<DeviceTypeID> { Set(d?.types.map(\.id) ?? []) }

    @Test func shellyPlugS_isAPlugWithAnElectricalSensor_inMatterUnits() throws {
        let (host, registry) = try ComponentMappingTests.run("shelly-plug-s")
        let id = "c45bbe6a1b2c"
        #expect(host.devices.count == 1, "the power and energy sensors join the plug, \(host.devices.keys.sorted())")
        #expect(types(host.devices[id]) == [OnOffPlugInUnitDeviceType.identifier, ElectricalSensorDeviceType.identifier])
        #expect(host.devices[id]?.types.first(where: \.isPrimary)?.id == OnOffPlugInUnitDeviceType.identifier)
        #expect(host.value(id, OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        // 42.37 W, rounded to 0.1 W by the template → 42,400 mW.
        #expect(host.value(id, EPM.identifier, EPM.Attribute.activePower) == .int(42_400))
        // 90,600 watt-minutes / 60 / 1000 = 1.51 kWh → 1,510,000 mWh.
        #expect(host.value(id, EEM.identifier, EEM.Attribute.cumulativeEnergyImported) == .object(["Energy": .int(1_510_000)]))
        #expect(registry.malformed.isEmpty)
    }

    @Test func tasmotaPow_reportsPowerEnergyVoltageAndCurrent_onOneElectricalSensor() throws {
        let (host, registry) = try ComponentMappingTests.run("tasmota-pow")
        let id = "3C71BF"
        #expect(host.devices.count == 1)
        #expect(types(host.devices[id]) == [OnOffPlugInUnitDeviceType.identifier, ElectricalSensorDeviceType.identifier])
        #expect(host.value(id, EPM.identifier, EPM.Attribute.activePower) == .int(118_000))
        #expect(host.value(id, EPM.identifier, EPM.Attribute.voltage) == .int(231_000))
        #expect(host.value(id, EPM.identifier, EPM.Attribute.activeCurrent) == .int(541))
        #expect(host.value(id, EEM.identifier, EEM.Attribute.cumulativeEnergyImported) == .object(["Energy": .int(12_345_000)]))
        #expect(registry.malformed.isEmpty)
    }

    @Test func zigbee2mqttPlug_mapsItsMeteringExposes() throws {
        let (host, registry) = try ComponentMappingTests.run("zigbee2mqtt-plug")
        let id = "zigbee2mqtt_0xa4c138f1e2d3c4b5"
        #expect(host.devices.count == 1)
        #expect(host.value(id, OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        #expect(host.value(id, EPM.identifier, EPM.Attribute.activePower) == .int(61_000))
        #expect(host.value(id, EPM.identifier, EPM.Attribute.voltage) == .int(229_000))
        #expect(host.value(id, EPM.identifier, EPM.Attribute.activeCurrent) == .int(270))
        #expect(host.value(id, EEM.identifier, EEM.Attribute.cumulativeEnergyImported) == .object(["Energy": .int(3_450_000)]))
        #expect(registry.malformed.isEmpty)
    }

    @Test func zigbee2mqttAirMonitor_isAnAirQualitySensorWithFourConcentrations() throws {
        let (host, registry) = try ComponentMappingTests.run("zigbee2mqtt-air-quality")
        let id = "zigbee2mqtt_0x842e14fffe5a6b7c"
        #expect(host.devices.count == 1, "\(host.devices.keys.sorted())")
        let d = host.devices[id]
        #expect(types(d) == [AirQualitySensorDeviceType.identifier, TemperatureSensorDeviceType.identifier])
        #expect(d?.types.first(where: \.isPrimary)?.id == AirQualitySensorDeviceType.identifier)
        let co2 = CarbonDioxideConcentrationMeasurementTrait.identifier
        let pm25 = PM25ConcentrationMeasurementTrait.identifier
        let pm10 = PM10ConcentrationMeasurementTrait.identifier
        let tvoc = TotalVolatileOrganicCompoundsConcentrationMeasurementTrait.identifier
        #expect(host.value(id, co2, Concentration.measuredValue) == .double(612))
        #expect(host.value(id, co2, Concentration.measurementUnit) == .int(ConcentrationUnit.ppm.rawValue))
        #expect(host.value(id, pm25, Concentration.measuredValue) == .double(11))
        #expect(host.value(id, pm25, Concentration.measurementUnit) == .int(ConcentrationUnit.µgPerCubicMetre.rawValue))
        #expect(host.value(id, pm10, Concentration.measuredValue) == .double(18))
        #expect(host.value(id, tvoc, Concentration.measuredValue) == .double(152))
        #expect(host.value(id, pm25, Concentration.measurementMedium) == .int(0), "air")
        #expect(registry.malformed.isEmpty)
    }

    @Test func everyElectricalAndConcentrationTrait_isInTheGeneratedCatalogue() {
        let catalog = Catalog.standard
        for trait in [
            EPM.identifier, EEM.identifier, PowerTopologyTrait.identifier, CarbonDioxideConcentrationMeasurementTrait.identifier,
            PM25ConcentrationMeasurementTrait.identifier, PM10ConcentrationMeasurementTrait.identifier,
            TotalVolatileOrganicCompoundsConcentrationMeasurementTrait.identifier,
        ] {
            #expect(catalog.trait(trait) != nil, "\(trait)")
        }
        #expect(catalog.deviceType(ElectricalSensorDeviceType.identifier) != nil)
        #expect(catalog.trait(EPM.identifier)?.attributes.first { $0.id == EPM.Attribute.activePower }?.unit == "mW")
    }

    @Test func twoMetersOfOneDevice_doNotShareOneTrait() {
        // A Shelly 2.5 reports power per channel: the second channel becomes a device of its own.
        let dev = #""dev":{"ids":["e8db84d4c2a1"],"name":"Shelly 2.5"}"#
        let (_, host) = FirmwareBehaviourTests.registry([
            ("homeassistant/sensor/s25-relay-0-power/config", #"{"stat_t":"s25/relay/0/power","unit_of_meas":"W","dev_cla":"power","uniq_id":"p0","#
                + dev + "}"),
            ("homeassistant/sensor/s25-relay-1-power/config", #"{"stat_t":"s25/relay/1/power","unit_of_meas":"W","dev_cla":"power","uniq_id":"p1","#
                + dev + "}"),
        ])
        #expect(host.devices.keys.sorted() == ["e8db84d4c2a1", "e8db84d4c2a1/s25-relay-1-power"])
    }

    @Test(arguments: [
        (#"{"stat_t":"m/p","dev_cla":"power","unit_of_meas":"hp","uniq_id":"m"}"#, "sensor power unit 'hp' is not mapped"),
        (#"{"stat_t":"m/p","dev_cla":"pm25","unit_of_meas":"%","uniq_id":"m"}"#, "sensor pm25 unit '%' is not mapped"),
    ])
    func anUnknownUnit_isRefusedWithTheUnitNamed(_ config: String, _ message: String) {
        let (_, host) = FirmwareBehaviourTests.registry([("homeassistant/sensor/m/config", config)])
        #expect(host.devices.isEmpty)
        #expect(host.logLines.contains { $0.contains(message) }, "\(host.logLines)")
    }

    @Test func readingsOutOfRange_areRefused_andTheLastGoodValueStays() {
        let (start, host) = FirmwareBehaviourTests.registry([
            ("homeassistant/sensor/m/e/config", #"{"stat_t":"m/e","dev_cla":"energy","unit_of_meas":"kWh","uniq_id":"e","dev":{"ids":"m"}}"#),
            ("homeassistant/sensor/m/c/config", #"{"stat_t":"m/c","dev_cla":"carbon_dioxide","unit_of_meas":"ppm","uniq_id":"c","dev":{"ids":"m"}}"#),
        ])
        var registry = start
        func send(_ t: String, _ p: String) { ComponentMappingTests.apply(registry.receive(Message(topic: t, text: p)), to: host) }
        send("m/e", "2.5")
        send("m/e", "-1")  // cumulative energy is 0…2⁶² mWh
        send("m/e", "1e300")
        #expect(host.value("m", EEM.identifier, EEM.Attribute.cumulativeEnergyImported) == .object(["Energy": .int(2_500_000)]))
        send("m/c", "-5")
        #expect(host.value("m", CarbonDioxideConcentrationMeasurementTrait.identifier, Concentration.measuredValue) == nil)
        #expect(registry.malformed["sensor/m/e"] == 2)
        #expect(registry.malformed["sensor/m/c"] == 1)
    }

    @Test func batteryVoltageInMillivolts_isThePowerSourcesBatVoltage_notAMeter() throws {
        // zigbee2mqtt's battery devices report `voltage` in mV ("Voltage of the battery in millivolts").
        let (start, host) = FirmwareBehaviourTests.registry([
            ("homeassistant/binary_sensor/door/contact/config",
             #"{"stat_t":"z/door","val_tpl":"{{ value_json.contact }}","pl_on":false,"pl_off":true,"dev_cla":"door","uniq_id":"c","dev":{"ids":"door"}}"#),
            ("homeassistant/sensor/door/voltage/config",
             #"{"stat_t":"z/door","val_tpl":"{{ value_json.voltage }}","dev_cla":"voltage","unit_of_meas":"mV","ent_cat":"diagnostic","uniq_id":"v","dev":{"ids":"door"}}"#),
        ])
        #expect(Set(host.devices["door"]?.types.map(\.id) ?? []) == [ContactSensorDeviceType.identifier])
        #expect(host.devices["door"]?.types.first?.traits[PowerSourceTrait.identifier] != nil)
        var registry = start
        ComponentMappingTests.apply(registry.receive(Message(topic: "z/door", text: #"{"contact": true, "voltage": 3015}"#)), to: host)
        #expect(host.value("door", PowerSourceTrait.identifier, PowerSourceTrait.Attribute.batVoltage) == .int(3015))
    }
}
