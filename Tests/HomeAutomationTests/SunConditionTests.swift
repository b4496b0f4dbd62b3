import Foundation
import HearthConfiguration
import HomeAutomation
import HomeCore
import HomeModel
import Testing

/// Sun conditions (`sun: {after: sunset-30m, before: sunrise+10m}`, `sun: {isUp: true}`):
/// validated (location, spelling), evaluated around a real Amsterdam sunset on an injected
/// clock with what they saw in the trace, and read from YAML and JSON alike.
@Suite(.timeLimit(.minutes(1))) struct SunConditionTests {
    static let zone = TimeZone(identifier: "Europe/Amsterdam")!
    static let amsterdam = SolarLocation(latitude: 52.37, longitude: 4.90)

    static func lamp(_ condition: String, id: String = "evening-lamp") -> String {
        """
        {"id": "\(id)", "name": "\(id.replacingOccurrences(of: "-", with: " "))", "starters": [{"manual": {}}],
         "conditions": \(condition),
         "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
        """
    }

    @Test func afterSunsetMinus30m_beforeSunrisePlus10m_aroundARealSunset() async throws {
        let sunset = try #require(SolarCalculator.time(of: .sunset, onDayOf: SunTests.day("2026-06-01", Self.zone), in: Self.zone, Self.amsterdam))
        let sunrise = try #require(SolarCalculator.time(of: .sunrise, onDayOf: SunTests.day("2026-06-02", Self.zone), in: Self.zone, Self.amsterdam))
        let h = TestHome()
        let clock = TestAutomationClock(epoch: sunset.addingTimeInterval(-1800 - 60))
        let engine = AutomationEngine(core: h.core, clock: clock, timeZone: Self.zone, location: Self.amsterdam)
        let service = Task { await engine.run() }
        defer { service.cancel() }
        try await engine.save(.json(Self.lamp(#"{"sun": {"after": "sunset-30m", "before": "sunrise+10m"}}"#)), as: admin)
        await engine.start()

        // A minute before sunset − 30 min: a near-miss, with the instants it compared.
        let early = try await engine.runNow("evening-lamp", as: admin)
        await engine.waitForTraces { $0["evening-lamp"]?.last?.outcome == .conditionFailed }
        let missed = try await engine.trace(early, as: admin)
        let seen = try #require(missed.conditions.first)
        #expect(!seen.holds)
        #expect(seen.saw.contains("sunset-30m " + SunTests.clock(sunset.addingTimeInterval(-1800), Self.zone)), "\(seen.saw)")
        #expect(seen.saw.contains("local time " + SunTests.clock(clock.now(), Self.zone)), "\(seen.saw)")
        #expect(h.lampOn == false)

        // Two minutes later it holds and the lamp goes on.
        clock.advance(.seconds(120))
        let late = try await engine.runNow("evening-lamp", as: admin)
        await engine.waitForTraces { $0["evening-lamp"]?.last?.outcome == .completed }
        #expect(try await engine.trace(late, as: admin).conditions.first?.holds == true)
        #expect(h.lampOn == true)

        // The window wraps midnight: it holds until the next sunrise + 10 min, not after.
        func holdsNow() async throws -> Bool {
            try await engine.simulate(.json(Self.lamp(#"{"sun": {"after": "sunset-30m", "before": "sunrise+10m"}}"#, id: "probe")), starter: nil, as: admin)
                .conditions.first?.holds == true
        }
        #expect(try await holdsNow())
        clock.advance(.seconds(Int64(sunrise.timeIntervalSince(clock.now())) + 300))  // sunrise + 5 min
        #expect(try await holdsNow())
        clock.advance(.seconds(600))  // sunrise + 15 min
        #expect(try await holdsNow() == false)
    }

    @Test func isUp_changesAtSunset_andTheTraceSaysTheElevation() async throws {
        let sunset = try #require(SolarCalculator.time(of: .sunset, onDayOf: SunTests.day("2026-06-01", Self.zone), in: Self.zone, Self.amsterdam))
        let h = TestHome()
        let clock = TestAutomationClock(epoch: sunset.addingTimeInterval(-120))
        let engine = AutomationEngine(core: h.core, clock: clock, timeZone: Self.zone, location: Self.amsterdam)
        let up = try Automation.json(Self.lamp(#"{"sun": {"isUp": true}}"#, id: "up"))
        let down = try Automation.json(Self.lamp(#"{"not": {"sun": {"isUp": true}}}"#, id: "down"))
        let before = try await engine.simulate(up, starter: nil, as: admin)
        #expect(before.conditions.first?.holds == true, "\(before.conditions)")
        #expect(before.conditions.first?.saw.hasPrefix("sun elevation ") == true)
        #expect(before.conditions.first?.saw.hasSuffix(": up") == true, "\(before.conditions)")
        #expect(before.steps.first?.result == "wouldSend")
        clock.advance(.seconds(240))  // two minutes after sunset
        let after = try await engine.simulate(up, starter: nil, as: admin)
        #expect(after.conditions.first?.holds == false)
        #expect(after.conditions.first?.saw.hasSuffix(": down") == true, "\(after.conditions)")
        #expect(after.steps.isEmpty, "conditions do not hold: nothing would be sent")
        #expect(try await engine.simulate(down, starter: nil, as: admin).steps.first?.result == "wouldSend")
    }

    @Test func validator_needsALocation_andSpellsTheEvents() async throws {
        let h = TestHome()
        let noLocation = AutomationEngine(core: h.core, clock: TestAutomationClock())
        let issues = await noLocation.validate(try .json(Self.lamp(#"{"sun": {"isUp": true}}"#)))
        #expect(issues.map(\.code) == ["locationRequired"])
        #expect(issues.first?.path == "conditions.sun")
        #expect(issues.first?.suggestion?.contains("location:") == true)

        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock(), timeZone: Self.zone, location: Self.amsterdam)
        let misspelt = await engine.validate(try .json(Self.lamp(#"{"sun": {"after": "sunsett-30m"}}"#)))
        #expect(misspelt.map(\.code) == ["invalidValue"])
        #expect(misspelt.first?.path == "conditions.sun.after")
        #expect(misspelt.first?.suggestion == "'sunset-30m'")
        #expect(await engine.validate(try .json(Self.lamp(#"{"sun": {"isUp": true, "after": "dusk"}}"#))).map(\.code) == ["conflictingCondition"])
        #expect(await engine.validate(try .json(Self.lamp(#"{"sun": {}}"#))).map(\.code) == ["missingKey"])
        #expect(await engine.validate(try .json(Self.lamp(#"{"sun": {"after": "dusk+1h", "before": "dawn - 15m"}}"#))).isEmpty)
        // Where the event is missing on some days (polar summer), a warning, not an error.
        let tromso = AutomationEngine(core: h.core, clock: TestAutomationClock(), timeZone: TimeZone(identifier: "Europe/Oslo")!,
            location: SolarLocation(latitude: 69.65, longitude: 18.96))
        let polar = await tromso.validate(try .json(Self.lamp(#"{"sun": {"after": "sunset"}}"#)))
        #expect(polar.map(\.code) == ["sunEventMissing"])
        #expect(polar.first?.severity == .warning)
    }

    @Test func yamlAndJSON_readTheSameSunCondition_andRoundTrip() throws {
        let yaml = """
            automations:
              - id: hall
                name: Hall
                starters: [ { manual: {} } ]
                conditions:
                  any:
                    - sun: { after: sunset-30m, before: sunrise+10m }
                    - sun: { isUp: false }
                actions:
                  - command: { device: p:lamp, trait: OnOff, command: On }
            """
        let config = try HearthConfig.parse(yaml, file: "etc/hearth.yaml")
        let h = TestHome()
        let read = AutomationConfig.read(
            scenes: nil, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines, state: h.core.state,
            catalog: h.core.catalog, location: Self.amsterdam, timeZone: Self.zone, checksLocation: true)
        #expect(read.errors.isEmpty, "\(read.errors)")
        let fromYAML = try #require(read.automations.first)
        #expect(fromYAML.conditions == .any([.sun(SunCondition(after: "sunset-30m", before: "sunrise+10m")), .sun(SunCondition(isUp: false))]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(fromYAML), as: UTF8.self)
        #expect(json.contains(#"{"sun":{"after":"sunset-30m","before":"sunrise+10m"}}"#), "\(json)")
        #expect(json.contains(#"{"sun":{"isUp":false}}"#), "\(json)")
        #expect(try Automation.json(json) == fromYAML)
        // Without a location hearth.yaml names the line.
        let unplaced = AutomationConfig.read(
            scenes: nil, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines, state: h.core.state,
            catalog: h.core.catalog, checksLocation: true)
        #expect(unplaced.errors.first?.hasPrefix("etc/hearth.yaml:") == true, "\(unplaced.errors)")
        #expect(unplaced.errors.first?.contains("conditions.any[0].sun: a sun condition needs the home's coordinates") == true, "\(unplaced.errors)")
    }
}
