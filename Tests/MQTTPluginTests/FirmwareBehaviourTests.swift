import DriverAPI
import DriverTesting
import HomeModel
import Testing
@testable import MQTTPlugin

/// What real firmware sends (#14, "MQTT: what real firmware sends"), through the pure registry.
@Suite struct FirmwareBehaviourTests {
    static func registry(_ discovery: [(String, String)]) -> (Registry, TestHost) {
        let host = TestHost(pluginID: "mqtt")
        var registry = Registry()
        ComponentMappingTests.apply(registry.connectionUp(), to: host)
        for (topic, payload) in discovery {
            ComponentMappingTests.apply(registry.receive(Message(topic: topic, text: payload)), to: host)
        }
        return (registry, host)
    }

    @Test func homeAssistantTemplateFunctions_areSupported_orRefusedByName() throws {
        func render(_ s: String, _ value: String) throws -> Value { try Template(s).render(.init(value: value, json: nil)) }
        #expect(try render("{{ is_number(value) }}", "21.5") == .bool(true))
        #expect(try render("{{ value | is_number }}", "abc") == .bool(false))
        #expect(try render("{{ float(value, 0) }}", "abc") == .double(0))
        #expect(try render("{{ float(value) + 1 }}", "1.5") == .double(2.5))
        #expect(try render("{{ int(value, -1) }}", "x") == .int(-1))
        #expect(try render("{{ iif(value == 'ON', 'yes', 'no') }}", "ON") == .string("yes"))
        #expect(try render("{{ (value == 'ON') | iif('yes', 'no') }}", "OFF") == .string("no"))
        do {
            _ = try Template("{{ as_timestamp(value) }}")
            Issue.record("as_timestamp must be refused")
        } catch {
            #expect(error.message.contains("unsupported function 'as_timestamp()'"))
        }
    }

    @Test func coverPosition_winsOverOpenClosedState() {
        let (registryStart, host) = Self.registry([(
            "homeassistant/cover/blind/config",
            #"{"cmd_t":"blind/set","stat_t":"blind/state","pos_t":"blind/position","uniq_id":"blind","dev":{"ids":"blind"}}"#
        )])
        var registry = registryStart
        let lift = WindowCoveringTrait.Attribute.currentPositionLiftPercent100ths
        ComponentMappingTests.apply(registry.receive(Message(topic: "blind/position", text: "30")), to: host)
        #expect(host.value("blind", WindowCoveringTrait.identifier, lift) == .int(7000))
        // Zigbee2mqtt and Shelly report `open` for any position above closed.
        ComponentMappingTests.apply(registry.receive(Message(topic: "blind/state", text: "open")), to: host)
        #expect(host.value("blind", WindowCoveringTrait.identifier, lift) == .int(7000))
        // Without a position topic, `open` is fully open.
        let (plainStart, plainHost) = Self.registry([(
            "homeassistant/cover/door/config", #"{"cmd_t":"door/set","stat_t":"door/state","uniq_id":"door","dev":{"ids":"door"}}"#
        )])
        var plain = plainStart
        ComponentMappingTests.apply(plain.receive(Message(topic: "door/state", text: "open")), to: plainHost)
        #expect(plainHost.value("door", WindowCoveringTrait.identifier, lift) == .int(0))
    }

    @Test func releaseAfterALongPress_isALongRelease() {
        // zigbee2mqtt's Aqara button: `hold` then `release` are separate triggers.
        let (registryStart, host) = Self.registry([
            ("homeassistant/device_automation/btn/action_hold/config",
             #"{"atype":"trigger","t":"z2m/btn/action","type":"action","stype":"hold","pl":"hold","dev":{"ids":"btn"}}"#),
            ("homeassistant/device_automation/btn/action_release/config",
             #"{"atype":"trigger","t":"z2m/btn/action","type":"action","stype":"release","pl":"release","dev":{"ids":"btn"}}"#),
            ("homeassistant/device_automation/btn/action_single/config",
             #"{"atype":"trigger","t":"z2m/btn/action","type":"action","stype":"single","pl":"single","dev":{"ids":"btn"}}"#),
        ])
        var registry = registryStart
        for payload in ["hold", "release", "single"] {
            ComponentMappingTests.apply(registry.receive(Message(topic: "z2m/btn/action", text: payload)), to: host)
        }
        #expect(host.events.map(\.event) == [
            SwitchTrait.Event.longPress, SwitchTrait.Event.longRelease,
            SwitchTrait.Event.initialPress, SwitchTrait.Event.shortRelease,
        ])
    }

    @Test func wildcardStateTopic_routesEveryMatchingTopic() {
        let (registryStart, host) = Self.registry([(
            "homeassistant/binary_sensor/door/config",
            #"{"stat_t":"house/+/door","dev_cla":"door","uniq_id":"door","dev":{"ids":"door"}}"#
        )])
        var registry = registryStart
        #expect(registry.subscribedTopics.contains("house/+/door"))
        let state = BooleanStateTrait.Attribute.stateValue
        ComponentMappingTests.apply(registry.receive(Message(topic: "house/hall/door", text: "ON")), to: host)
        #expect(host.value("door", BooleanStateTrait.identifier, state) == .bool(false))
        ComponentMappingTests.apply(registry.receive(Message(topic: "house/kitchen/door", text: "OFF")), to: host)
        #expect(host.value("door", BooleanStateTrait.identifier, state) == .bool(true))
        // Not a match: more levels.
        ComponentMappingTests.apply(registry.receive(Message(topic: "house/kitchen/back/door", text: "ON")), to: host)
        #expect(host.value("door", BooleanStateTrait.identifier, state) == .bool(true))
    }

    @Test func colourModes_mapToColorControl() throws {
        // zigbee2mqtt's colour bulb (xy and hs) and ESPHome's RGB light, JSON schema.
        let (registryStart, host) = Self.registry([
            ("homeassistant/light/bulb/light/config",
             #"{"schema":"json","cmd_t":"z2m/bulb/set","stat_t":"z2m/bulb","brightness":true,"supported_color_modes":["xy","hs","color_temp"],"uniq_id":"bulb","dev":{"ids":"bulb"}}"#),
            ("homeassistant/light/strip/light/config",
             #"{"schema":"json","cmd_t":"esp/strip/set","stat_t":"esp/strip/state","brightness":true,"supported_color_modes":["rgb"],"uniq_id":"strip","dev":{"ids":"strip"}}"#),
        ])
        var registry = registryStart
        let cc = ColorControlTrait.identifier
        #expect(host.devices["bulb"]?.types.map(\.id) == [ExtendedColorLightDeviceType.identifier])
        #expect(host.devices["strip"]?.types.map(\.id) == [ExtendedColorLightDeviceType.identifier])
        ComponentMappingTests.apply(registry.receive(Message(
            topic: "z2m/bulb", text: #"{"state":"ON","brightness":254,"color_mode":"xy","color":{"x":0.3,"y":0.6,"h":120,"s":100}}"#)), to: host)
        #expect(host.value("bulb", cc, ColorControlTrait.Attribute.currentX) == .int(19661))
        #expect(host.value("bulb", cc, ColorControlTrait.Attribute.currentY) == .int(39322))
        #expect(host.value("bulb", cc, ColorControlTrait.Attribute.colorMode) == .int(1))
        ComponentMappingTests.apply(registry.receive(Message(
            topic: "z2m/bulb", text: #"{"state":"ON","color_mode":"hs","color":{"x":0.3,"y":0.6,"h":180,"s":50}}"#)), to: host)
        #expect(host.value("bulb", cc, ColorControlTrait.Attribute.currentHue) == .int(127))
        #expect(host.value("bulb", cc, ColorControlTrait.Attribute.currentSaturation) == .int(127))
        #expect(host.value("bulb", cc, ColorControlTrait.Attribute.colorMode) == .int(0))
        ComponentMappingTests.apply(registry.receive(Message(
            topic: "z2m/bulb", text: #"{"state":"ON","color_mode":"color_temp","color_temp":250}"#)), to: host)
        #expect(host.value("bulb", cc, ColorControlTrait.Attribute.colorTemperatureMireds) == .int(250))
        #expect(host.value("bulb", cc, ColorControlTrait.Attribute.colorMode) == .int(2))

        ComponentMappingTests.apply(registry.receive(Message(
            topic: "esp/strip/state", text: #"{"state":"ON","color_mode":"rgb","brightness":255,"color":{"r":255,"g":0,"b":0}}"#)), to: host)
        let x = try #require(host.value("strip", cc, ColorControlTrait.Attribute.currentX)?.intValue)
        let y = try #require(host.value("strip", cc, ColorControlTrait.Attribute.currentY)?.intValue)
        #expect(abs(Double(x) / 65536 - 0.64) < 0.001 && abs(Double(y) / 65536 - 0.33) < 0.001, "sRGB red is x 0.64, y 0.33")

        let toXY = try registry.action(for: DriverCommand(
            localID: "bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: cc, command: ColorControlTrait.Command.moveToColor,
            arguments: ["colorX": .int(19661), "colorY": .int(39322)]))
        #expect(toXY.action.publish.map(\.payload) == [#"{"color":{"x":0.3,"y":0.6},"state":"ON"}"#])
        let toHS = try registry.action(for: DriverCommand(
            localID: "bulb", deviceType: ExtendedColorLightDeviceType.identifier, trait: cc, command: ColorControlTrait.Command.moveToHueAndSaturation,
            arguments: ["hue": .int(127), "saturation": .int(254)]))
        #expect(toHS.action.publish.map(\.payload) == [#"{"color":{"h":180,"s":100},"state":"ON"}"#])
        let red = try registry.action(for: DriverCommand(
            localID: "strip", deviceType: ExtendedColorLightDeviceType.identifier, trait: cc, command: ColorControlTrait.Command.moveToColor,
            arguments: ["colorX": .int(41943), "colorY": .int(21627)]))
        let rgb = try #require(try JSONParser.parse(red.action.publish.first?.payload ?? "")["color"])
        #expect(rgb["r"] == .int(255) && (rgb["g"]?.intValue ?? 99) <= 2 && (rgb["b"]?.intValue ?? 99) <= 2, "\(rgb)")
    }

    @Test(arguments: [
        ("a/+/c", "a/b/c", true), ("a/#", "a", true), ("a/#", "a/b/c", true), ("#", "$SYS/x", false), ("+/x", "$SYS/x", false),
        ("a/+", "a/b/c", false), ("a/b", "a/b", true), ("+", "", true), ("a/+/c", "a//c", true),
    ])
    func topicFilterMatching_followsMQTT(_ filter: String, _ topic: String, _ expected: Bool) {
        #expect(MQTTTopic.matches(filter: filter, topic: topic) == expected)
    }

    @Test(arguments: [
        ("", true, "is empty"), ("a\u{0}b", true, "U+0000"), ("a/#/b", true, "'#'"), ("a/b#", true, "'#'"), ("a+/b", true, "'+'"),
        ("a/+", false, "wildcard"), (String(repeating: "x", count: 65_536), true, "65535 bytes"), ("a\u{7}", true, "control"),
    ])
    func invalidTopics_areRefused(_ topic: String, _ subscribe: Bool, _ reason: String) {
        let problem = MQTTTopic.problem(topic, subscribe ? .subscribe : .publish)
        #expect(problem?.contains(reason) == true, "\(problem ?? "accepted")")
    }

    @Test func validTopics_areAccepted() {
        for t in ["a", "a/b", "a/+/c", "#", "a/#", "+", "/", "$SYS/#", "zigbee2mqtt/Living room/set", "ü/日本"] {
            #expect(MQTTTopic.problem(t, .subscribe) == nil, "\(t)")
        }
        #expect(MQTTTopic.problem("cmnd/plug/POWER", .publish) == nil)
    }
}
