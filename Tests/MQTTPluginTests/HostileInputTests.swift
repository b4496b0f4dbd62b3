import DriverAPI
import Foundation
import HomeModel
import Testing
@testable import MQTTPlugin

/// Discovery messages, templates and payloads that used to kill hearthd (#14). Each runs in a
/// child process (an exit test), so a crash is a failed test rather than a dead test run.
// Serialized: each case is an exit test (a child process of the whole test binary); dozens at
// once on a 2-core machine starve every other suite.
@Suite(.serialized) struct HostileInputTests {
    /// One hostile discovery config and the field it must be refused for.
    struct Case: Codable, Sendable, CustomTestStringConvertible {
        let component: String
        let config: String
        let field: String
        var testDescription: String { "\(component) \(field): \(config)" }
    }

    static let cases: [Case] = [
        Case(component: "switch", config: #"{"cmd_t":"s/set","stat_t":"s/state","qos":"nan"}"#, field: "qos"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","stat_t":"s/state","qos":1e300}"#, field: "qos"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","stat_t":"s/state","qos":"-inf"}"#, field: "qos"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","stat_t":"s/state","qos":7}"#, field: "qos"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","stat_t":"s/state","qos":-1}"#, field: "qos"),
        Case(component: "light", config: #"{"cmd_t":"l/set","clr_temp_cmd_t":"l/ct","min_mirs":"nan"}"#, field: "min_mireds"),
        Case(component: "light", config: #"{"cmd_t":"l/set","clr_temp_cmd_t":"l/ct","max_mirs":1e300}"#, field: "max_mireds"),
        Case(component: "light", config: #"{"cmd_t":"l/set","bri_cmd_t":"l/b","bri_stat_t":"l/bs","bri_scl":"nan"}"#, field: "brightness_scale"),
        Case(component: "light", config: #"{"cmd_t":"l/set","bri_cmd_t":"l/b","bri_stat_t":"l/bs","bri_scl":1e300}"#, field: "brightness_scale"),
        Case(component: "light", config: #"{"cmd_t":"l/set","bri_cmd_t":"l/b","bri_stat_t":"l/bs","bri_scl":"inf"}"#, field: "brightness_scale"),
        Case(component: "light", config: #"{"schema":"json","cmd_t":"l/set","stat_t":"l/state","brightness":true,"bri_scl":-5}"#, field: "brightness_scale"),
        Case(component: "cover", config: #"{"cmd_t":"c/set","pos_t":"c/pos","set_pos_t":"c/setpos","pos_open":1e300}"#, field: "position_open"),
        Case(component: "cover", config: #"{"cmd_t":"c/set","pos_t":"c/pos","set_pos_t":"c/setpos","pos_clsd":"nan"}"#, field: "position_closed"),
        Case(component: "fan", config: #"{"cmd_t":"f/set","pct_cmd_t":"f/p","pct_stat_t":"f/ps","spd_rng_min":"-inf"}"#, field: "speed_range_min"),
        Case(component: "fan", config: #"{"cmd_t":"f/set","pct_cmd_t":"f/p","pct_stat_t":"f/ps","spd_rng_max":1e300}"#, field: "speed_range_max"),
        Case(component: "climate", config: #"{"temp_cmd_t":"c/t","curr_temp_t":"c/cur","min_temp":"nan"}"#, field: "min_temp"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","device":"kitchen"}"#, field: "device"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","avty":"online"}"#, field: "availability"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","avty":[{"t":""}]}"#, field: "availability[0].topic"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","dev":{"ids":{"a":1}}}"#, field: "device.identifiers"),
        Case(component: "binary_sensor", config: #"{"stat_t":""}"#, field: "state_topic"),
        Case(component: "binary_sensor", config: #"{"stat_t":"\u0000abc"}"#, field: "state_topic"),
        Case(component: "binary_sensor", config: #"{"stat_t":"a/#/b"}"#, field: "state_topic"),
        Case(component: "switch", config: #"{"cmd_t":"a/+/set"}"#, field: "command_topic"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","opt":"maybe"}"#, field: "optimistic"),
        Case(component: "switch", config: #"{"cmd_t":"s/set","avty_mode":"most"}"#, field: "availability_mode"),
    ]

    /// Runs a hostile config next to a good sensor; returns the log lines, and checks that the
    /// good sensor still reports. Sends every routed topic a few payloads and runs every
    /// command with extreme arguments, which is where the old crashes waited.
    static func survive(_ c: Case) -> [String] {
        let host = TestHostRecorder()
        var registry = Registry()
        host.apply(registry.connectionUp())
        host.apply(registry.receive(Message(topic: "homeassistant/\(c.component)/hostile/config", text: c.config)))
        host.apply(registry.receive(Message(
            topic: "homeassistant/sensor/good/config",
            text: #"{"stat_t":"good/t","dev_cla":"temperature","uniq_id":"good","dev":{"ids":"good"}}"#)))
        var harness = MQTTInputHarness(registry: registry)
        for topic in harness.routedTopics {
            for payload in ["128", "1e300", "-1e300", "nan", "ON", "open", "{\"brightness\":255,\"state\":\"ON\"}"] {
                harness.receive(topic: topic, payload: Array(payload.utf8))
            }
        }
        harness.commandEverything(arguments: MQTTInputHarness.extremeArguments)
        registry = harness.registry
        host.apply(registry.receive(Message(topic: "good/t", text: "21.5")))
        #expect(host.reports.contains { $0.localID == "good" && $0.value == .int(2150) }, "the good sensor keeps working")
        return host.logs
    }

    @Test(arguments: cases)
    func hostileNumberOrType_refusesTheEntityWithTheFieldNamed(_ c: Case) async {
        await #expect(processExitsWith: .success) { [c] in
            let logs = HostileInputTests.survive(c)
            let refusal = logs.filter { $0.contains("discovery homeassistant/\(c.component)/hostile/config") }
            #expect(refusal.count == 1, "one log line: \(logs)")
            #expect(refusal.first?.contains("field '\(c.field)'") == true, "names the field: \(refusal)")
        }
    }

    static let hostileTemplates: [String] = [
        "{{ " + String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000) + " }}",
        "{{ " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + " }}",
        "{{ " + String(repeating: "not ", count: 200_000) + "value }}",
        "{{ " + String(repeating: "- ", count: 200_000) + "1 }}",
        "{{ value" + String(repeating: " + 1", count: 200_000) + " }}",
        "{{ value" + String(repeating: "|float", count: 100_000) + " }}",
        "{{ 1 if 1 else " + String(repeating: "1 if 1 else ", count: 100_000) + "1 }}",
        String(repeating: "{% if 1 %}", count: 100_000) + "x" + String(repeating: "{% endif %}", count: 100_000),
        "{{ value|replace('1', '1111111111')|replace('1', '1111111111')|replace('1', '1111111111')|replace('1', '1111111111')|replace('1', '1111111111')|replace('1', '1111111111')|replace('1', '1111111111')|replace('1', '1111111111') }}",
        "{{ (0 - 9223372036854775807 - 1) % -1 }}",
        "{{ (0 - 9223372036854775807 - 1) // -1 }}",
        "{{ 9223372036854775807 // 1 }}",
        "{{ -(0 - 9223372036854775807 - 1) }}",
        "{{ value_json[-9223372036854775807 - 1] }}",
    ]

    @Test(arguments: 0..<hostileTemplates.count)
    func hostileTemplate_isRefusedOrRendered_neverCrashes(_ index: Int) async {
        await #expect(processExitsWith: .success) { [index] in
            let source = HostileInputTests.hostileTemplates[index]
            // On a thread with a small stack, like the plugin's network thread might have.
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                _ = MQTTInputHarness.renderTemplate(source, payload: Array("[1,2,3]".utf8))
                done.signal()
            }
            thread.stackSize = 512 * 1024
            thread.start()
            done.wait()
        }
    }

    @Test func deepNesting_isATemplateError() throws {
        for source in Self.hostileTemplates.prefix(8) {
            #expect(throws: TemplateError.self, "\(source.prefix(30))") { try Template(source).render(.init(value: "1", json: nil)) }
        }
        let blocks = String(repeating: "{% if 1 %}", count: 40) + "x" + String(repeating: "{% endif %}", count: 40)
        #expect(throws: TemplateError("'{% if %}' blocks nested deeper than 32 levels")) { try Template(blocks) }
        // Within the limits, nesting still works.
        let fine = "{{ " + String(repeating: "(", count: 20) + "value|int + 1" + String(repeating: ")", count: 20) + " }}"
        #expect(try Template(fine).render(.init(value: "41", json: nil)) == .int(42))
    }

    @Test func integerOverflow_inTemplates_followsPython() throws {
        func render(_ s: String) throws -> Value { try Template(s).render(.init(value: "", json: nil)) }
        #expect(try render("{{ (0 - 9223372036854775807 - 1) % -1 }}") == .int(0))
        #expect(try render("{{ -7 % 3 }}") == .int(2))
        #expect(try render("{{ 7 // -2 }}") == .int(-4))
        #expect(try render("{{ 9223372036854775807 // 1 }}") == .int(Int64.max))
        #expect(try render("{{ -(0 - 9223372036854775807 - 1) }}") == .double(9.223372036854775808e18))
    }

    @Test func invalidUTF8_inDiscovery_isRefused_notReplaced() {
        var registry = Registry()
        _ = registry.connectionUp()
        var payload = Array(#"{"stat_t":"s/t","name":"bad "#.utf8)
        payload += [0xC3, 0x28]  // an invalid two-byte sequence
        payload += Array(#""}"#.utf8)
        let effects = registry.receive(Message(topic: "homeassistant/binary_sensor/bad/config", payload: payload))
        #expect(registry.entities.isEmpty)
        #expect(effects.contains { if case .log(_, let m, _) = $0 { m.contains("not valid UTF-8") } else { false } })
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(#""\ud800""#) }
    }

    @Test func invalidUTF8_inAStatePayload_isRefused() {
        var registry = Registry()
        _ = registry.connectionUp()
        _ = registry.receive(Message(topic: "homeassistant/switch/s/config", text: #"{"stat_t":"s/state","cmd_t":"s/set","pl_on":"ON\u00e9"}"#))
        let effects = registry.receive(Message(topic: "s/state", payload: Array("ON".utf8) + [0xC3]))
        #expect(registry.malformed["switch/s"] == 1)
        #expect(!effects.contains { if case .report = $0 { true } else { false } })
    }

    @Test func discoveryCaps_refuseBeyondTheLimit_countedAndLoggedOnce() {
        var settings = Registry.Settings()
        settings.maximumEntities = 5
        settings.maximumRefusedRemembered = 3
        var registry = Registry(settings: settings)
        _ = registry.connectionUp()
        var logs: [String] = []
        var counts: [String: Int] = [:]
        for i in 0..<20 {
            let effects = registry.receive(Message(
                topic: "homeassistant/binary_sensor/n\(i)/config", text: #"{"stat_t":"b/\#(i)","uniq_id":"u\#(i)"}"#))
            for e in effects {
                if case .log(_, let m, _) = e { logs.append(m) }
                if case .count(let n) = e { counts[n, default: 0] += 1 }
            }
        }
        #expect(registry.entities.count == 5)
        #expect(counts["discovery_limit_reached"] == 15)
        #expect(counts["refused_discovery_payloads"] == 15)
        // Three refusals remembered and logged, then one line saying later ones are only counted.
        #expect(logs.filter { $0.contains("limit of 5 discovered entities") }.count == 4)
        #expect(logs.last?.contains("later refusals are counted, not logged") == true)
    }

    @Test func refusedConfigs_areNotKeptInMemory() {
        var registry = Registry()
        _ = registry.connectionUp()
        let big = #"{"stat_t":"x","val_tpl":"{{ \#(String(repeating: "(", count: 200_000)) }}"}"#
        let effects = registry.receive(Message(topic: "homeassistant/binary_sensor/big/config", text: big))
        let line = effects.compactMap { if case .log(_, let m, _) = $0 { m } else { nil } }.first ?? ""
        #expect(line.count < 1000, "the refusal is logged in short")
        // A repeat is recognised (not compiled or logged again) although its bytes are not kept.
        #expect(registry.receive(Message(topic: "homeassistant/binary_sensor/big/config", text: big)).isEmpty)
    }
}

extension MQTTInputHarness {
    init(registry: Registry) {
        self.init()
        self.registry = registry
    }
}

/// Records what a registry's effects would tell the host.
final class TestHostRecorder {
    var logs: [String] = []
    var reports: [AttributeReport] = []

    func apply(_ effects: [Registry.Effect]) {
        for effect in effects {
            switch effect {
            case .log(_, let m, _): logs.append(m)
            case .report(let r): reports += r
            default: break
            }
        }
    }
}
