import DriverAPI
import GPIOKit
import HomeModel
import Testing

@Suite struct GPIOConfigurationTests {
    func section(_ value: Value, lines: [String: Int] = [:]) -> PluginConfiguration {
        PluginConfiguration(value: value, file: "hearth.yaml", keyPath: "plugins.gpio", lines: lines)
    }

    func message(_ value: Value, lines: [String: Int] = [:]) -> String? {
        do {
            _ = try GPIOConfiguration.load(section(value, lines: lines))
            return nil
        } catch {
            return error.message
        }
    }

    @Test func decodesEveryKey_withNamesOffsetsAndDurations() throws {
        let config = try GPIOConfiguration.load(
            section([
                "retry": "2s", "state-file": "/tmp/state.json",
                "lines": [
                    [
                        "chip": "gpiochip0", "line": "GPIO17", "role": "contact", "active-low": true, "bias": "pull-up",
                        "debounce": "20ms", "name": "Front door", "room": "Hallway",
                    ],
                    ["id": "pir", "chip": "pinctrl-rp1", "line": 4, "role": "motion", "hold-on": "2min", "chatter-guard": false],
                    ["chip": "gpiochip0", "line": "5", "role": "button", "long-press": 1.5, "multi-press-window": "300ms", "multi-press-max": 4],
                    ["chip": "gpiochip0", "line": 6, "role": "relay", "initial": "restore", "active-low": true],
                ],
                "simulated": [["chip": "sim0", "lines": 4, "control": "/tmp/x"]],
            ]))
        #expect(config.retry.duration == .seconds(2))
        #expect(config.lines[0].line == .name("GPIO17"))
        #expect(config.lines[0].localID == "gpiochip0-gpio17")
        #expect(config.lines[0].bias == .pullUp)
        #expect(config.lines[0].debounce.duration == .milliseconds(20))
        #expect(config.lines[1].localID == "pir")
        #expect(config.lines[1].holdOn?.duration == .seconds(120))
        #expect(config.lines[0].chatterGuard && !config.lines[1].chatterGuard)
        #expect(config.lines[2].line == .offset(5))
        #expect(config.lines[2].longPress?.duration == .milliseconds(1500))
        #expect(config.lines[3].initial == .restore)
        #expect(config.simulated[0].lineNames == ["GPIO0", "GPIO1", "GPIO2", "GPIO3"])
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        let value: Value
        let key: String
        let mentions: String
        var testDescription: String { key }
    }

    static let badInputs: [BadInput] = [
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "doorbell"]]], key: "lines[0].role", mentions: "doorbell"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "contact", "activelow": true]]], key: "lines[0].activelow", mentions: "did you mean 'active-low'"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "contact", "debounce": "soon"]]], key: "lines[0].debounce", mentions: "not a duration"),
        BadInput(value: ["lines": [["chip": "c", "role": "contact"]]], key: "lines[0]", mentions: "missing required key 'line'"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "contact"], ["chip": "c", "line": 1, "role": "button"]]], key: "lines[1].line", mentions: "already used by lines[0]"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "relay", "initial": "restore"]]], key: "lines[0].initial", mentions: "state-file"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "contact", "hold-on": 5]]], key: "lines[0].hold-on", mentions: "occupancy and motion"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "relay", "bias": "pull-up"]]], key: "lines[0].bias", mentions: "inputs only"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "contact", "name": "Door 🚪"]]], key: "lines[0].name", mentions: "not a valid device name"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "contact", "bias": "up"]]], key: "lines[0].bias", mentions: "up"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "relay", "chatter-guard": false]]], key: "lines[0].chatter-guard", mentions: "inputs only"),
        BadInput(value: ["lines": [["chip": "c", "line": 1, "role": "contact", "chatter-guard": "no"]]], key: "lines[0].chatter-guard", mentions: "chatter-guard"),
    ]

    @Test(arguments: badInputs)
    func refusesBadInput_namingFileLineAndKey(_ bad: BadInput) throws {
        let (value, key, mentions) = (bad.value, bad.key, bad.mentions)
        var lines = ["lines[0]": 11, "lines[1]": 13]
        lines[key] = 12
        let text = try #require(message(value, lines: lines))
        #expect(text.hasPrefix("hearth.yaml:12: plugins.gpio.\(key): "), "\(text)")
        #expect(text.contains(mentions), "\(text)")
    }

    @Test func acceptsEmptySection() throws {
        let config = try GPIOConfiguration.load(section([:]))
        #expect(config.lines.isEmpty)
    }
}
