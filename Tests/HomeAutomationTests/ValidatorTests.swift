import Foundation
import HashTreeCollections
import Synchronization
import DriverTesting
import HomeAutomation
import HomeCore
import HomeModel
import TestSupport
import Testing

@Suite struct ValidatorTests {
    func compiler(_ h: TestHome) -> AutomationCompiler {
        AutomationCompiler(catalog: h.core.catalog, state: h.core.state, scenes: ["evening"], automations: ["manual-one": true, "auto-one": false])
    }

    @Test func everyProblemAtOnce_withCodesPathsAndSuggestions() throws {
        let h = TestHome()
        let a = try Automation.json("""
            {"id": "bad", "name": "Bad one",
             "starters": [{"id": "s", "attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValu", "below": 200}},
                          {"id": "s", "event": {"device": "p:buton", "trait": "Switch", "event": "InitialPress"}}],
             "conditions": {"all": [{"starter": "t"}, {"scene": "evenin"}]},
             "actions": [{"command": {"device": "p:lamp", "trait": "LevelControl", "command": "MoveToLevel"}},
                         {"command": {"device": "p:dim", "trait": "LevelControl", "command": "MoveToLevel", "args": {"Level": 300, "TransitionTime": 0, "OptionsMask": 0, "OptionsOverride": 0}}},
                         {"write": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "value": 5}},
                         {"delay": "8d"}, {"run": "auto-one"}]}
            """)
        let issues = compiler(h).validate(a)
        let byPath = Dictionary(issues.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byPath["starters[0].attribute.attribute"]?.code == "unknownAttribute")
        #expect(byPath["starters[0].attribute.attribute"]?.suggestion?.hasPrefix("'MeasuredValue'") == true)
        #expect(byPath["starters[1].id"]?.code == "duplicateStarterId")
        #expect(byPath["starters[1].event.device"]?.code == "unknownDevice")
        #expect(byPath["starters[1].event.device"]?.suggestion?.contains("'p:button'") == true)
        #expect(byPath["conditions.all[0].starter"]?.code == "unknownStarter")
        #expect(byPath["conditions.all[1].scene"]?.suggestion == "'evening'")
        #expect(byPath["actions[0].command.trait"]?.code == "traitNotOnDevice")
        #expect(byPath["actions[0].command.trait"]?.suggestion?.contains("'OnOff'") == true, "the traits it has")
        #expect(byPath["actions[1].command.args"]?.code == "invalidArgument")
        #expect(byPath["actions[2].write.attribute"]?.code == "notWritable")
        #expect(byPath["actions[3].delay"]?.code == "outOfRange")
        #expect(byPath["actions[4].run"]?.code == "notManual")
        #expect(issues.filter { $0.severity == .error }.count >= 10)
    }

    @Test func outOfRangeValue_suggestsTheRange() throws {
        let h = TestHome()
        let a = Automation(
            id: "x", name: "X", starters: [Starter(.attribute(AttributeStarter(device: "p:dim", trait: "LevelControl", attribute: "CurrentLevel", to: 999)))],
            actions: [.log("hi")])
        let issue = try #require(compiler(h).validate(a).first)
        #expect(issue.code == "valueOutOfRange")
        #expect(issue.path == "starters[0].attribute.to")
        #expect(issue.suggestion?.hasPrefix("a value in 0…") == true, "\(issue)")
    }

    @Test func sensitiveDevices_needAllowSensitive() {
        let h = TestHome()
        var a = Automation(
            id: "x", name: "X", starters: [Starter(.manual)], actions: [.command(CommandAction(device: "p:lock", trait: "DoorLock", command: "UnlockDoor"))])
        #expect(compiler(h).validate(a).contains { $0.code == "sensitiveNotAllowed" })
        a.allowSensitive = true
        #expect(compiler(h).validate(a).isEmpty)
    }

    @Test func designExample_roundTripsThroughJSON() throws {
        let text = """
            {"id": "frost-guard", "name": "Frost guard", "onRestart": "resume", "mode": "restart",
             "starters": [{"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "below": 200, "hysteresis": 50, "for": "10m"}},
                          {"id": "t", "time": {"at": "06:30", "days": ["mon", "fri"]}}, {"manual": {}}, {"startup": {"after": "30s"}}],
             "conditions": {"any": [{"not": {"time": {"after": "22:00", "before": "06:00"}}}, {"starter": "t"}]},
             "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}},
                         {"waitFor": {"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "above": 600}, "timeout": "6h"}},
                         {"parallel": [{"log": "a"}, {"notify": "b"}]},
                         {"if": {"condition": {"starter": "t"}, "then": [{"stop": "done"}], "else": [{"delay": "1h30m"}]}}]}
            """
        let a = try Automation.json(text)
        let encoded = try JSONEncoder().encode(a)
        let back = try JSONDecoder().decode(Automation.self, from: encoded)
        #expect(back == a)
        #expect(a.starters[0].kind == .attribute(AttributeStarter(device: "p:thermo", trait: "TemperatureMeasurement", attribute: "MeasuredValue", below: 200, hysteresis: 50, for: .minutes(10))))
        let h = TestHome()
        #expect(compiler(h).validate(a).filter { $0.severity == .error }.isEmpty, "\(compiler(h).validate(a))")
    }

    @Test func spans_parseAndPrint() {
        #expect(Span(parsing: "1h30m")?.milliseconds == 5_400_000)
        #expect(Span(parsing: "200ms")?.milliseconds == 200)
        #expect(Span(parsing: "-30m")?.milliseconds == -1_800_000)
        #expect(Span(parsing: "45")?.milliseconds == 45_000)
        #expect(Span(parsing: "5x") == nil)
        #expect(Span(parsing: "") == nil)
        #expect(Span(milliseconds: 5_400_250).description == "1h30m250ms")
    }

    /// Random automations (seeded, so a failure repeats) never crash the validator, and what
    /// it accepts the engine's JSON carries unchanged.
    @Test func randomAutomations_neverCrashTheValidator() throws {
        let h = TestHome()
        let c = compiler(h)
        var rng = SplitMix(seed: 0x5eed_18)
        var accepted = 0
        for i in 0..<3000 {
            let a = RandomAutomation.make(&rng, index: i)
            let issues = c.validate(a)
            for issue in issues { #expect(!issue.path.isEmpty && !issue.code.isEmpty) }
            if issues.allSatisfy({ $0.severity == .warning }) { accepted += 1 }
            let back = try JSONDecoder().decode(Automation.self, from: JSONEncoder().encode(a))
            #expect(back == a)
        }
        #expect(accepted > 0, "some random automations are valid")
    }
}

/// Builds automations from a mix of real and wrong names, values and shapes.
enum RandomAutomation {
    static let devices = ["p:lamp", "p:dim", "p:thermo", "p:button", "p:lock", "p:nope", "Floor Lamp", "", "p:"]
    static let traits = ["OnOff", "LevelControl", "TemperatureMeasurement", "Switch", "DoorLock", "Nope", "", "0x0006", "0xZZ"]
    static let attributes = ["OnOff", "CurrentLevel", "MeasuredValue", "CurrentPosition", "LockState", "x", ""]
    static let values: [Value] = [.bool(true), .int(-1), .int(90), .int(100_000), .double(2.5), .string("on"), .null, .list([]), .object([:])]
    /// For optional targets (`to`, `equals`): JSON cannot tell `to: null` from no `to`.
    static let targets: [Value] = values.filter { !$0.isNull }
    static let commands = ["On", "Off", "Toggle", "MoveToLevel", "LockDoor", "Fly", ""]
    static let times = ["06:30", "25:00", "6", "", "23:59:59", "aa:bb"]

    static func pick<T>(_ list: [T], _ rng: inout SplitMix) -> T { list[Int(rng.next() % UInt64(list.count))] }

    static func make(_ rng: inout SplitMix, index: Int) -> Automation {
        let starterCount = Int(rng.next() % 3)
        let starters: [Starter] = (0..<starterCount).map { _ in starter(&rng) }
        let actionCount = Int(rng.next() % 4)
        return Automation(
            id: rng.next() % 10 == 0 ? "bad id!" : "auto-\(index)", name: rng.next() % 10 == 0 ? "🙂" : "Auto \(index)",
            mode: pick(Automation.Mode.allCases, &rng), maxRuns: rng.next() % 5 == 0 ? Int(rng.next() % 20) : nil,
            starters: starters, conditions: rng.next() % 2 == 0 ? condition(&rng, depth: 0) : nil,
            actions: (0..<actionCount).map { _ in action(&rng, depth: 0) })
    }

    static func starter(_ rng: inout SplitMix) -> Starter {
        switch rng.next() % 6 {
        case 0:
            return Starter(
                id: pick(["a", "b", "a"], &rng),
                .attribute(
                    AttributeStarter(
                        device: pick(devices, &rng), trait: pick(traits, &rng), attribute: pick(attributes, &rng),
                        to: rng.next() % 2 == 0 ? pick(targets, &rng) : Value?.none, above: rng.next() % 3 == 0 ? Double(Int(rng.next() % 400) - 100) : nil,
                        hysteresis: rng.next() % 3 == 0 ? Double(Int(rng.next() % 100) - 10) : nil,
                        for: rng.next() % 3 == 0 ? Span(milliseconds: Int64(rng.next() % 1_000_000_000) - 1000) : nil)))
        case 1:
            return Starter(.event(EventStarter(device: pick(devices, &rng), trait: pick(traits, &rng), event: pick(["InitialPress", "LongPress", "Boom"], &rng), where: ["NewPosition": pick(values, &rng)])))
        case 2: return Starter(.time(TimeStarter(at: pick(times, &rng), days: rng.next() % 2 == 0 ? ["mon", "xyz"] : nil)))
        case 3: return Starter(.connectivity(ConnectivityStarter(device: pick(devices, &rng), to: pick(["offline", "online", "sideways"], &rng))))
        case 4: return Starter(.manual)
        default: return Starter(.startup(after: nil))
        }
    }

    static func condition(_ rng: inout SplitMix, depth: Int) -> Condition {
        if depth < 3, rng.next() % 3 == 0 {
            let n = Int(rng.next() % 3)
            let children = (0..<n).map { _ in condition(&rng, depth: depth + 1) }
            return pick([Condition.all(children), .any(children), .not(children.first ?? .starter("a"))], &rng)
        }
        switch rng.next() % 4 {
        case 0:
            return .attribute(AttributeCondition(device: pick(devices, &rng), trait: pick(traits, &rng), attribute: pick(attributes, &rng), equals: pick(targets, &rng)))
        case 1: return .time(TimeCondition(after: pick(times, &rng), before: pick(times, &rng)))
        case 2: return .starter(pick(["a", "b", "zz"], &rng))
        default: return .scene(pick(["evening", "morning"], &rng))
        }
    }

    static func action(_ rng: inout SplitMix, depth: Int) -> Action {
        if depth < 3, rng.next() % 4 == 0 {
            let inner = (0..<Int(rng.next() % 3)).map { _ in action(&rng, depth: depth + 1) }
            return rng.next() % 2 == 0 ? .parallel(inner) : .if(IfAction(condition(&rng, depth: 2), then: inner, else: inner.reversed()))
        }
        switch rng.next() % 7 {
        case 0:
            return .command(CommandAction(device: pick(devices, &rng), trait: pick(traits, &rng), command: pick(commands, &rng), args: rng.next() % 2 == 0 ? ["Level": pick(values, &rng)] : nil))
        case 1: return .write(WriteAction(device: pick(devices, &rng), trait: pick(traits, &rng), attribute: pick(attributes, &rng), value: pick(values, &rng)))
        case 2: return .delay(Span(milliseconds: Int64(rng.next() % 1_000_000_000) - 10))
        case 3: return .waitFor(WaitFor(condition(&rng, depth: 2), timeout: .seconds(Int64(rng.next() % 100)), onTimeout: pick(["stop", "continue", "explode"], &rng)))
        case 4: return .run(pick(["manual-one", "auto-one", "none"], &rng))
        case 5: return .scene(pick(["evening", "nope"], &rng))
        default: return .stop(reason: "r", error: rng.next() % 2 == 0)
        }
    }
}
