import DriverAPI
import DriverTesting
import Foundation
import HomeModel
import Testing
@testable import MQTTPlugin

/// The registry's behaviour without a broker: removal, availability, malformed payloads,
/// reconnection and commands.
@Suite struct RegistryTests {
    let host = TestHost(pluginID: "mqtt")
    var registry = Registry()

    init() { ComponentMappingTests.apply(registry.connectionUp(), to: host) }

    @discardableResult
    mutating func send(_ topic: String, _ payload: String) -> [Registry.Effect] {
        let effects = registry.receive(Message(topic: topic, text: payload))
        ComponentMappingTests.apply(effects, to: host)
        return effects
    }

    mutating func sendBytes(_ topic: String, _ payload: [UInt8]) {
        ComponentMappingTests.apply(registry.receive(Message(topic: topic, payload: payload)), to: host)
    }

    static let thermometer = #"""
        {"name": "Thermo", "stat_t": "th/state", "val_tpl": "{{ value_json.temperature }}", "dev_cla": "temperature",
         "unit_of_meas": "°C", "uniq_id": "th1", "dev": {"ids": "th-device", "name": "Thermo"}}
        """#

    func temperature(_ id: String = "th-device") -> Value? {
        host.value(id, TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue)
    }

    @Test mutating func removesTheDevice_whenTheLastEntityIsRemovedWithAnEmptyPayload() {
        send("homeassistant/sensor/th/config", Self.thermometer)
        #expect(host.devices["th-device"] != nil)
        #expect(registry.subscribedTopics.contains("th/state"))
        let effects = send("homeassistant/sensor/th/config", "")
        #expect(host.devices["th-device"] == nil)
        #expect(effects.contains(.unsubscribe("th/state")))
        #expect(effects.contains(.remove("th-device")))
        #expect(!registry.subscribedTopics.contains("th/state"))
    }

    @Test mutating func ignoresARepeatedDiscoveryMessage() {
        send("homeassistant/sensor/th/config", Self.thermometer)
        #expect(send("homeassistant/sensor/th/config", Self.thermometer).isEmpty)
    }

    @Test mutating func countsMalformedAndHostilePayloads_logsOncePerEntity_andKeepsTheLastGoodState() {
        send("homeassistant/sensor/th/config", Self.thermometer)
        send("th/state", #"{"temperature": 21.5}"#)
        #expect(temperature() == .int(2150))
        send("th/state", "not json at all")
        send("th/state", #"{"temperature": "warm"}"#)
        send("th/state", #"{"temperature": [1, 2]}"#)
        send("th/state", #"{"humidity": 40}"#)
        send("th/state", #"{"temperature": -300}"#)
        sendBytes("th/state", [0x7B, 0x00, 0xFF, 0xFE, 0x80])
        send("th/state", String(repeating: "[", count: 50_000))
        send("th/state", "{\"temperature\": 1" + String(repeating: " ", count: 300_000) + "}")
        #expect(temperature() == .int(2150), "the last good state stays")
        #expect(registry.malformed["sensor/th"] == 8)
        let lines = host.logLines.filter { $0.contains("refused payload") }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("th/state") == true)
        #expect(lines.first?.contains("sensor/th") == true)
        send("th/state", #"{"temperature": 22}"#)
        #expect(temperature() == .int(2200), "a good payload after bad ones is taken")
    }

    /// The devices the log lines of `effects` name, for lines containing `text`.
    static func loggedDevices(_ effects: [Registry.Effect], containing text: String) -> [String?] {
        effects.compactMap { effect in
            guard case .log(_, let line, let device) = effect, line.contains(text) else { return nil }
            return .some(device)
        }
    }

    @Test mutating func logLinesAboutAnEntity_nameItsDevice() {
        send("homeassistant/sensor/th/config", Self.thermometer)
        #expect(Self.loggedDevices(send("th/state", "not json at all"), containing: "refused payload") == ["th-device"])
        let light = #"{"cmd_t": "l/set", "stat_t": "l/state", "bri_val_tpl": "{{ value | regex_findall('[0-9]+') | first }}", "uniq_id": "lamp"}"#
        #expect(Self.loggedDevices(send("homeassistant/light/lamp/config", light), containing: "brightness_value_template") == ["lamp"])
        // A refused discovery message forms no device.
        #expect(Self.loggedDevices(send("homeassistant/vacuum/v/config", #"{"cmd_t": "v/set", "uniq_id": "v"}"#), containing: "vacuum") == [nil])
    }

    @Test mutating func refusesOutOfRangeReadings() {
        send("homeassistant/sensor/h/config", #"{"stat_t": "h/state", "dev_cla": "humidity", "uniq_id": "h1"}"#)
        send("h/state", "45")
        send("h/state", "150")
        #expect(host.value("h1", RelativeHumidityMeasurementTrait.identifier, RelativeHumidityMeasurementTrait.Attribute.measuredValue) == .int(4500))
        #expect(registry.malformed["sensor/h"] == 1)
    }

    @Test mutating func reportsAnUnsupportedTemplateOnce_andKeepsTheSupportedParts() {
        let light = #"""
            {"cmd_t": "l/set", "stat_t": "l/state", "bri_stat_t": "l/bri", "bri_cmd_t": "l/bri/set",
             "bri_val_tpl": "{{ value | regex_findall('[0-9]+') | first }}", "uniq_id": "lamp"}
            """#
        send("homeassistant/light/lamp/config", light)
        send("homeassistant/light/lamp/config", light.replacingOccurrences(of: "l/set", with: "l/set2"))
        send("l/state", "ON")
        #expect(host.value("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        let warnings = host.logLines.filter { $0.contains("brightness_value_template") }
        #expect(warnings.count == 2, "once per discovery of the entity, not per message")
        #expect(warnings.first?.contains("regex_findall") == true)
        send("l/bri", "200")
        #expect(host.value("lamp", LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel) == nil)

        send("homeassistant/sensor/bad/config", #"{"stat_t": "b/state", "dev_cla": "temperature", "val_tpl": "{{ states('x') }}", "uniq_id": "bad"}"#)
        send("homeassistant/sensor/bad/config", #"{"stat_t": "b/state", "dev_cla": "temperature", "val_tpl": "{{ states('y') }}", "uniq_id": "bad"}"#)
        #expect(host.devices["bad"] == nil)
        #expect(host.logLines.filter { $0.contains("homeassistant/sensor/bad/config") && $0.contains("states") }.count == 2)
    }

    @Test mutating func refusesUnsupportedComponentsAndMalformedDiscoveryOnce() {
        send("homeassistant/vacuum/v/config", #"{"cmd_t": "v/set", "uniq_id": "v"}"#)
        send("homeassistant/vacuum/v/config", #"{"cmd_t": "v/set2", "uniq_id": "v"}"#)
        send("homeassistant/sensor/x/config", "{not json")
        #expect(host.devices.isEmpty)
        #expect(host.logLines.filter { $0.contains("vacuum") }.count == 1)
        #expect(host.logLines.contains { $0.contains("homeassistant/sensor/x/config") && $0.contains("not valid JSON") })
    }

    @Test mutating func availabilityModes_andMixedEntities_drivePerTraitConnectivity() {
        let base = #""dev": {"ids": "multi"}, "dev_cla": "temperature""#
        send("homeassistant/sensor/multi/a/config", #"{"stat_t": "m/a", "uniq_id": "a", "avty_mode": "all", "avty": [{"t": "m/bridge"}, {"t": "m/a/avail"}], "#  + base + "}")
        send("homeassistant/binary_sensor/multi/b/config", #"{"stat_t": "m/b", "uniq_id": "b", "dev_cla": "door", "avty_t": "m/b/avail", "dev": {"ids": "multi"}}"#)
        #expect(host.connectivity(of: "multi") == .unknown)
        send("m/bridge", "online")
        #expect(host.connectivity(of: "multi") == .unknown, "mode all needs both topics")
        send("m/a/avail", "online")
        #expect(host.connectivity(of: "multi") == .online)
        // One dead entity: its traits go offline, the others stay online (the device type and
        // device aggregate to partiallyOnline in the core), told per trait.
        let door = BooleanStateTrait.identifier, temperature = TemperatureMeasurementTrait.identifier
        send("m/b/avail", "offline")
        #expect(host.connectivity(of: "multi", trait: door) == .offline)
        #expect(host.connectivity(of: "multi", trait: temperature) != .offline)
        send("m/bridge", "offline")
        #expect(host.connectivity(of: "multi") == .offline)
        send("m/b/avail", "online")
        #expect(host.connectivity(of: "multi", trait: door) == .online)
        #expect(host.connectivity(of: "multi", trait: temperature) == nil, "only what changed is told: it stays offline with the device")
        #expect(host.connectivity(of: "multi") == .offline)
        send("m/b/avail", "maybe")
        #expect(registry.malformed["binary_sensor/multi/b"] == 1)
    }

    @Test mutating func disconnecting_marksEverythingOffline_andReconnecting_resubscribesEveryTopic() {
        send("homeassistant/sensor/th/config", Self.thermometer)
        #expect(host.connectivity(of: "th-device") == .online)
        let down = registry.connectionDown()
        ComponentMappingTests.apply(down, to: host)
        #expect(down == [.connectivity(.offline, device: nil)])
        #expect(host.connectivity(of: "th-device") == .offline)
        #expect(throws: HomeError.self) {
            try registry.action(for: DriverCommand(localID: "th-device", deviceType: 0x0302, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        }
        let up = registry.connectionUp()
        ComponentMappingTests.apply(up, to: host)
        #expect(up.contains(.subscribe("homeassistant/#", qos: 1)))
        #expect(up.contains(.subscribe("th/state", qos: 1)))
        #expect(host.connectivity(of: "th-device") == .online)
    }

    @Test mutating func commands_publishToTheCommandTopic_andOnlyOptimisticEntitiesAssumeTheirState() throws {
        send("homeassistant/switch/plug/config", #"{"cmd_t": "plug/set", "stat_t": "plug/state", "uniq_id": "plug"}"#)
        send("homeassistant/switch/relay/config", #"{"cmd_t": "relay/set", "uniq_id": "relay", "pl_on": "1", "pl_off": "0"}"#)
        let on = DriverCommand(localID: "plug", deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        let resolved = try registry.action(for: on)
        #expect(resolved.action.publish == [Outgoing(topic: "plug/set", payload: "ON")])
        #expect(registry.assume(resolved).isEmpty, "not optimistic: wait for the device's report")
        #expect(throws: HomeError.self) {
            try registry.action(for: DriverCommand(localID: "plug", deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle))
        }
        send("plug/state", "ON")
        let toggle = try registry.action(for: DriverCommand(localID: "plug", deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle))
        #expect(toggle.action.publish == [Outgoing(topic: "plug/set", payload: "OFF")])

        let relayOn = try registry.action(for: DriverCommand(localID: "relay", deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        #expect(relayOn.action.publish == [Outgoing(topic: "relay/set", payload: "1")])
        #expect(host.devices["relay"]?.optimistic == true, "no state topic: optimistic")
        ComponentMappingTests.apply(registry.assume(relayOn), to: host)
        #expect(host.value("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
    }

    @Test mutating func lightCommands_convertLevelsAndMiredsToTheDevicesScales() throws {
        send("homeassistant/light/bulb/config", #"""
            {"schema": "json", "cmd_t": "bulb/set", "stat_t": "bulb", "brightness": true, "brightness_scale": 100,
             "supported_color_modes": ["color_temp"], "color_temp_kelvin": true, "uniq_id": "bulb"}
            """#)
        let level = try registry.action(for: DriverCommand(
            localID: "bulb", deviceType: ColorTemperatureLightDeviceType.identifier, trait: LevelControlTrait.identifier,
            command: LevelControlTrait.Command.moveToLevel, arguments: ["Level": 254]))
        #expect(level.action.publish.first?.payload == #"{"brightness":100,"state":"ON"}"#)
        let ct = try registry.action(for: DriverCommand(
            localID: "bulb", deviceType: ColorTemperatureLightDeviceType.identifier, trait: ColorControlTrait.identifier,
            command: ColorControlTrait.Command.moveToColorTemperature, arguments: ["ColorTemperatureMireds": 250]))
        #expect(ct.action.publish.first?.payload == #"{"color_temp":4000,"state":"ON"}"#)
        send("bulb", #"{"state": "ON", "brightness": 50, "color_temp": 2700}"#)
        #expect(host.value("bulb", ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds) == .int(370))
        #expect(host.value("bulb", LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel) == .int(Int64(Units.level(brightness: 128))))
    }

    @Test mutating func coverAndThermostatCommands_useTheSpecsUnits() throws {
        send("homeassistant/cover/c/config", #"{"cmd_t": "c/set", "set_pos_t": "c/pos/set", "pos_t": "c/pos", "uniq_id": "c"}"#)
        let go = try registry.action(for: DriverCommand(
            localID: "c", deviceType: WindowCoveringDeviceType.identifier, trait: WindowCoveringTrait.identifier,
            command: WindowCoveringTrait.Command.goToLiftPercentage, arguments: ["LiftPercent100thsValue": 2500]))
        #expect(go.action.publish == [Outgoing(topic: "c/pos/set", payload: "75")])
        let close = try registry.action(for: DriverCommand(
            localID: "c", deviceType: WindowCoveringDeviceType.identifier, trait: WindowCoveringTrait.identifier,
            command: WindowCoveringTrait.Command.downOrClose))
        #expect(close.action.publish == [Outgoing(topic: "c/set", payload: "CLOSE")])

        send("homeassistant/climate/t/config", #"""
            {"temp_cmd_t": "t/sp/set", "temp_stat_t": "t/sp", "mode_cmd_t": "t/mode/set", "modes": ["off", "heat"], "uniq_id": "t"}
            """#)
        send("t/sp", "20.5")
        let raise = try registry.action(for: DriverCommand(
            localID: "t", deviceType: ThermostatDeviceType.identifier, trait: ThermostatTrait.identifier,
            command: ThermostatTrait.Command.setpointRaiseLower, arguments: ["Mode": 0, "Amount": 10]))
        #expect(raise.action.publish == [Outgoing(topic: "t/sp/set", payload: "21.5")])
        let mode = try registry.action(for: DriverWrite(
            localID: "t", deviceType: ThermostatDeviceType.identifier, trait: ThermostatTrait.identifier,
            attribute: ThermostatTrait.Attribute.systemMode, value: 0))
        #expect(mode.action.publish == [Outgoing(topic: "t/mode/set", payload: "off")])
        #expect(throws: HomeError.self) {
            try registry.action(for: DriverWrite(
                localID: "t", deviceType: ThermostatDeviceType.identifier, trait: ThermostatTrait.identifier,
                attribute: ThermostatTrait.Attribute.systemMode, value: 3))
        }
    }
}

@Suite struct JSONAttributesTests {
    @Test func batteryInJSONAttributes_givesTheDeviceAPowerSource() {
        let host = TestHost(pluginID: "mqtt")
        var registry = Registry()
        func send(_ topic: String, _ payload: String) {
            ComponentMappingTests.apply(registry.receive(Message(topic: topic, text: payload)), to: host)
        }
        ComponentMappingTests.apply(registry.connectionUp(), to: host)
        // zigbee2mqtt's legacy attributes: the device's whole state object.
        send("homeassistant/sensor/d/t/config", #"{"stat_t": "d/state", "json_attr_t": "d/attr", "dev_cla": "temperature", "uniq_id": "t", "dev": {"ids": "d"}}"#)
        #expect(host.devices["d"]?.types.first?.traits[PowerSourceTrait.identifier] == nil)
        send("d/attr", #"{"battery": 50, "linkquality": 90}"#)
        #expect(host.devices["d"]?.types.first?.traits[PowerSourceTrait.identifier] != nil, "the battery level brings the trait")
        #expect(host.value("d", PowerSourceTrait.identifier, PowerSourceTrait.Attribute.batPercentRemaining) == .int(100))
        // A battery entity later changes nothing about where the value goes.
        send("homeassistant/sensor/d/b/config", #"{"stat_t": "d/battery", "dev_cla": "battery", "uniq_id": "b", "dev": {"ids": "d"}}"#)
        send("d/attr", #"{"battery": 25}"#)
        #expect(host.value("d", PowerSourceTrait.identifier, PowerSourceTrait.Attribute.batPercentRemaining) == .int(50))
        #expect(host.devices["d"]?.types.count == 1)
        send("d/attr", "[1, 2]")
        #expect(registry.malformed["sensor/d/t"] == 1)
        send("d/attr", #"{"battery": 250}"#)
        #expect(registry.malformed["sensor/d/t"] == 2, "a battery level above 100 % is refused")
    }

    @Test func wifiSignalInJSONAttributes_isWiFiNetworkDiagnosticsRSSI() {
        // Tasmota's tele/STATE carries "Wifi": {"RSSI": <percent>, "Signal": <dBm>}; Shelly Gen1's
        // status carries "wifi_sta": {"rssi": <dBm>}.
        let (start, host) = FirmwareBehaviourTests.registry([
            ("homeassistant/switch/tas_RL_1/config",
             #"{"cmd_t":"cmnd/tas/POWER","stat_t":"tele/tas/STATE","val_tpl":"{{value_json.POWER}}","json_attr_t":"tele/tas/STATE","uniq_id":"tas_RL_1","dev":{"ids":["tas"]}}"#),
            ("homeassistant/switch/shelly-relay-0/config",
             #"{"cmd_t":"shellies/s1/relay/0/command","stat_t":"shellies/s1/relay/0","json_attr_t":"shellies/s1/info","uniq_id":"s1-relay-0","dev":{"ids":["s1"]}}"#),
        ])
        var registry = start
        func send(_ topic: String, _ payload: String) {
            ComponentMappingTests.apply(registry.receive(Message(topic: topic, text: payload)), to: host)
        }
        send("tele/tas/STATE", #"{"Time":"2024-03-01T10:00:00","POWER":"ON","Wifi":{"AP":1,"SSId":"home","RSSI":76,"Signal":-62,"LinkCount":1}}"#)
        send("shellies/s1/info", #"{"wifi_sta":{"connected":true,"ssid":"home","ip":"192.168.1.20","rssi":-71},"relays":[{"ison":false}]}"#)
        let rssi = WiFiNetworkDiagnosticsTrait.Attribute.rssi
        #expect(host.value("tas", WiFiNetworkDiagnosticsTrait.identifier, rssi) == .int(-62))
        #expect(host.value("tas", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == .bool(true))
        #expect(host.value("s1", WiFiNetworkDiagnosticsTrait.identifier, rssi) == .int(-71))
        #expect(registry.malformed.isEmpty)
        send("tele/tas/STATE", #"{"POWER":"ON","Wifi":{"Signal":12}}"#)
        #expect(registry.malformed["switch/tas_RL_1"] == 1, "a positive dBm is refused")
    }
}
