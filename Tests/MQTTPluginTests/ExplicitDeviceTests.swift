import DriverAPI
import DriverTesting
import HomeModel
import Testing
@testable import MQTTPlugin

/// Devices declared in the configuration: validation errors name file, line and key; readings
/// convert into the spec's units; commands publish their payload templates.
@Suite struct ExplicitDeviceTests {
    static func configuration(_ devices: Value, lines: [String: Int] = [:]) -> PluginConfiguration {
        PluginConfiguration(value: ["devices": devices], file: "hearth.yaml", keyPath: "plugins.mqtt", lines: lines)
    }

    @Test func namesTheFileLineAndKey_ofAnUnknownDeviceTypeOrAttribute() {
        let plugin = MQTTPlugin()
        let badType = Self.configuration([["id": "x", "deviceType": "Toaster"]], lines: ["devices[0].deviceType": 14])
        let e1 = #expect(throws: HomeError.self) { try plugin.validate(configuration: badType) }
        #expect(e1?.message == "hearth.yaml:14: plugins.mqtt.devices[0].deviceType: unknown device type 'Toaster' (see `hearth catalog`)")

        let badAttribute = Self.configuration([
            ["id": "x", "deviceType": "Temperature Sensor", "attributes": [["trait": "Temperature Measurement", "attribute": "Warmth", "topic": "t"]]]
        ])
        let e2 = #expect(throws: HomeError.self) { try plugin.validate(configuration: badAttribute) }
        #expect(e2?.message.contains("plugins.mqtt.devices[0].attributes[0].attribute") == true)
        #expect(e2?.message.contains("Warmth") == true)

        let badTemplate = Self.configuration([
            ["id": "x", "deviceType": "0x0302", "attributes": [["trait": "Temperature Measurement", "attribute": "MeasuredValue", "topic": "t", "template": "{{ now() }}"]]]
        ])
        let e3 = #expect(throws: HomeError.self) { try plugin.validate(configuration: badTemplate) }
        #expect(e3?.message.contains("devices[0].attributes[0].template") == true)

        let duplicate = Self.configuration([["id": "x", "deviceType": "0x0302"], ["id": "x", "deviceType": "0x0302"]])
        let e4 = #expect(throws: HomeError.self) { try plugin.validate(configuration: duplicate) }
        #expect(e4?.message.contains("used twice") == true)

        let badPort = PluginConfiguration(value: ["broker": ["port": 70000]], file: "hearth.yaml", keyPath: "plugins.mqtt", lines: ["broker.port": 3])
        let e5 = #expect(throws: HomeError.self) { try plugin.validate(configuration: badPort) }
        #expect(e5?.message == "hearth.yaml:3: plugins.mqtt.broker.port: must be between 1 and 65535, not 70000")

        let missingCA = PluginConfiguration(
            value: ["broker": ["caFile": "/nonexistent/ca.pem"]], file: "hearth.yaml", keyPath: "plugins.mqtt", lines: ["broker.caFile": 5])
        let e6 = #expect(throws: HomeError.self) { try plugin.validate(configuration: missingCA) }
        #expect(e6?.message == "hearth.yaml:5: plugins.mqtt.broker.caFile: cannot read /nonexistent/ca.pem (missing, or no permission)")

        let wrongType = PluginConfiguration(value: ["broker": ["port": "many"]], file: "hearth.yaml", keyPath: "plugins.mqtt")
        #expect(throws: HomeError.self) { try plugin.validate(configuration: wrongType) }
    }

    static let greenhouse: Value = [
        "id": "greenhouse", "name": "Greenhouse", "room": "Garden", "deviceType": "Temperature Sensor",
        "attributes": [
            ["trait": "Temperature Measurement", "attribute": "MeasuredValue", "topic": "gh/sensor", "json": "$.readings[0].temp", "unit": "fahrenheit"]
        ],
    ]

    static let dimmer: Value = [
        "id": "dimmer", "deviceType": "Dimmable Light", "optimistic": true,
        "attributes": [
            ["trait": "On/Off", "attribute": "OnOff", "topic": "dim/power", "map": ["on": true, "off": false]],
            ["trait": "Level Control", "attribute": "CurrentLevel", "topic": "dim/level", "unit": "brightness"],
        ],
        "commands": [
            ["trait": "On/Off", "command": "On", "topic": "dim/set", "payload": "on", "assume": ["OnOff": true]],
            ["trait": "Level Control", "command": "MoveToLevel", "topic": "dim/level/set", "payload": "{{ (Level * 100 / 254) | round | int }}"],
        ],
    ]

    func compiled(_ device: Value) throws -> Entity {
        let config = Self.configuration([device])
        let decoded = try config.decode(MQTTConfiguration.self)
        return try decoded.devices![0].entity(path: "devices[0]", configuration: config, catalog: .standard)
    }

    @Test func readsAJSONPath_andConvertsUnits_andCarriesTheCommissionHint() throws {
        let host = TestHost(pluginID: "mqtt")
        var registry = Registry()
        ComponentMappingTests.apply(registry.connectionUp() + registry.add(try compiled(Self.greenhouse)), to: host)
        #expect(host.devices["greenhouse"]?.commission == CommissionHint(name: "Greenhouse", room: "Garden"))
        #expect(host.devices["greenhouse"]?.types.first?.traits[DescriptorTrait.identifier] != nil, "required traits are present")
        ComponentMappingTests.apply(registry.receive(Message(topic: "gh/sensor", text: #"{"readings": [{"temp": 70.7}]}"#)), to: host)
        #expect(host.value("greenhouse", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue) == .int(2150))
        ComponentMappingTests.apply(registry.receive(Message(topic: "gh/sensor", text: #"{"readings": []}"#)), to: host)
        #expect(registry.malformed["config/greenhouse"] == 1)
    }

    @Test func mapsPlainPayloads_andPublishesCommandTemplates() throws {
        let host = TestHost(pluginID: "mqtt")
        var registry = Registry()
        ComponentMappingTests.apply(registry.connectionUp() + registry.add(try compiled(Self.dimmer)), to: host)
        ComponentMappingTests.apply(registry.receive(Message(topic: "dim/power", text: "on")), to: host)
        ComponentMappingTests.apply(registry.receive(Message(topic: "dim/level", text: "255")), to: host)
        #expect(host.value("dimmer", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        #expect(host.value("dimmer", LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel) == .int(254))
        ComponentMappingTests.apply(registry.receive(Message(topic: "dim/power", text: "dunno")), to: host)
        #expect(registry.malformed["config/dimmer"] == 1)
        let level = try registry.action(for: DriverCommand(
            localID: "dimmer", deviceType: DimmableLightDeviceType.identifier, trait: LevelControlTrait.identifier,
            command: LevelControlTrait.Command.moveToLevel, arguments: ["Level": 127]))
        #expect(level.action.publish == [Outgoing(topic: "dim/level/set", payload: "50")])
        let on = try registry.action(for: DriverCommand(
            localID: "dimmer", deviceType: DimmableLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        #expect(on.action.publish == [Outgoing(topic: "dim/set", payload: "on")])
        #expect(on.optimistic)
    }

    @Test(arguments: [("a.b[0].c", "['a']['b'][0]['c']"), ("$.x", "['x']"), ("it's", "['it\\'s']")])
    func turnsJSONPathsIntoTemplatePaths(_ path: String, _ expected: String) throws {
        #expect(try ExplicitDevice.jinjaPath(path) == expected)
    }
}
