import DriverAPI
import Foundation
import HearthConfiguration
import HomeAutomation
import HomeCore
import HomeModel
import Testing

/// `to: null` / `equals: null`: a nullable attribute's null value is a target (JSON null and
/// YAML `null` are "no value", not "absent"); the validator refuses it where the attribute is
/// not nullable.
@Suite(.timeLimit(.minutes(1))) struct NullTargetTests {
    static let levelGone = """
        {"id": "level-gone", "name": "Level gone",
         "starters": [{"attribute": {"device": "p:dim", "trait": "LevelControl", "attribute": "CurrentLevel", "to": null}}],
         "conditions": {"not": {"attribute": {"device": "p:dim", "trait": "LevelControl", "attribute": "CurrentLevel", "equals": 5}}},
         "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
        """

    @Test func toNull_firesWhenTheValueBecomesNull_andRoundTrips() async throws {
        let a = try Automation.json(Self.levelGone)
        guard case .attribute(let s) = a.starters[0].kind else { Issue.record("expected an attribute starter"); return }
        #expect(s.to == .some(.null), "null is a value here, not absent")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(a), as: UTF8.self)
        #expect(json.contains(#""to":null"#), "\(json)")
        #expect(try Automation.json(json) == a)
        #expect(!json.contains(#""from""#), "an absent from stays absent: \(json)")
        #expect(try Automation.json(json.replacingOccurrences(of: #","to":null"#, with: "")) != a, "absent is another automation (any change)")

        let h = TestHome()
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock())
        let service = Task { await engine.run() }
        defer { service.cancel() }
        try await engine.save(a, as: admin)
        await engine.start()
        h.report("dim", LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, 40)
        await engine.waitForVersion(h.core.state.version)
        #expect(try await engine.runs("level-gone", as: admin).isEmpty, "40 is not null")
        h.report("dim", LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, .null)
        await engine.waitForTraces { $0["level-gone"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
    }

    @Test func equalsNull_holdsOnlyForNull_andNonNullableAttributesRefuseIt() async throws {
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock())
        let probe = try Automation.json("""
            {"id": "probe", "name": "Probe", "starters": [{"manual": {}}],
             "conditions": {"attribute": {"device": "p:dim", "trait": "LevelControl", "attribute": "CurrentLevel", "equals": null}},
             "actions": [{"log": "null"}]}
            """)
        #expect(try await engine.simulate(probe, starter: nil, as: admin).conditions.first?.holds == false, "10 is not null")
        h.report("dim", LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, .null)
        let seen = try await engine.simulate(probe, starter: nil, as: admin).conditions.first
        #expect(seen?.holds == true, "\(String(describing: seen))")
        let onOff = try Automation.json(Self.levelGone.replacingOccurrences(of: #""trait": "LevelControl", "attribute": "CurrentLevel", "to": null"#, with: #""trait": "OnOff", "attribute": "OnOff", "to": null"#).replacingOccurrences(of: "p:dim\", \"trait\": \"OnOff", with: "p:lamp\", \"trait\": \"OnOff"))
        let issues = await engine.validate(onOff)
        #expect(issues.map(\.code) == ["valueOutOfRange"], "\(issues)")
        #expect(issues.first?.path == "starters[0].attribute.to")
    }

    @Test func yamlNull_isTheNullValue() throws {
        let config = try HearthConfig.parse("""
            automations:
              - id: level-gone
                name: Level gone
                starters:
                  - attribute: { device: p:dim, trait: LevelControl, attribute: CurrentLevel, to: null }
                actions:
                  - command: { device: p:lamp, trait: OnOff, command: On }
            """, file: "etc/hearth.yaml")
        let h = TestHome()
        let read = AutomationConfig.read(
            scenes: nil, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines, state: h.core.state,
            catalog: h.core.catalog)
        #expect(read.errors.isEmpty, "\(read.errors)")
        guard case .attribute(let s) = read.automations.first?.starters.first?.kind else { Issue.record("expected an attribute starter"); return }
        #expect(s.to == .some(.null))
    }
}
