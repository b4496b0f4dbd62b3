import Foundation
import HashTreeCollections
import Synchronization
import DriverTesting
import HearthConfiguration
import HomeAutomation
import HomeCore
import HomeModel
import Testing

/// `scenes:` and `automations:` in hearth.yaml: read with lines, every problem as file:line: key.
@Suite struct ConfigTests {
    static let yaml = """
        location: { latitude: 52.37, longitude: 4.90, timezone: Europe/Amsterdam }

        scenes:
          - id: evening
            name: Evening
            room: Living Room
            transition: 2s
            targets:
              - { device: p:lamp, trait: OnOff, attribute: OnOff, value: true }
              - { device: Ceiling, trait: LevelControl, attribute: CurrentLevel, value: 90 }

        automations:
          - id: hall-light
            name: Hall light
            mode: restart
            starters:
              - { id: press, event: { device: p:button, trait: Switch, event: InitialPress } }
            actions:
              - scene: evening
              - delay: 5m
              - command: { device: p:lamp, trait: OnOff, command: Off }
          - id: broken
            name: Broken
            starters:
              - attribute: { device: p:thermo, trait: TemperatureMeasurement, attribute: MeasuredValu, below: 200 }
            actions:
              - command: { device: p:lamb, trait: OnOff, command: On }
          - id: shapeless
            name: Shapeless
            starters: [ { sometimes: {} } ]
            actions: []
        """

    @Test func readsScenesAndAutomations_andReportsEveryProblemWithFileLineAndKey() throws {
        let config = try HearthConfig.parse(Self.yaml, file: "etc/hearth.yaml")
        #expect(config.home.timeZone == "Europe/Amsterdam")
        let h = TestHome()
        let read = AutomationConfig.read(
            scenes: config.home.scenes, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines,
            state: h.core.state, catalog: h.core.catalog)
        #expect(read.scenes.map(\.id) == ["evening"])
        #expect(read.scenes.first?.targets.last?.device == "p:dim", "devices by name")
        #expect(read.scenes.first?.transitionMilliseconds == 2000)
        #expect(read.scenes.first?.configRef == "etc/hearth.yaml:4")
        #expect(read.automations.map(\.id) == ["hall-light"])
        #expect(read.automationRefs["hall-light"] == "etc/hearth.yaml:13")
        #expect(read.errors.contains { $0.hasPrefix(
            "etc/hearth.yaml:25: automations[1].starters[0].attribute.attribute: Temperature Measurement has no attribute 'MeasuredValu' (did you mean 'MeasuredValue'") },
            "\(read.errors)")
        #expect(read.errors.contains { $0.hasPrefix("etc/hearth.yaml:27: automations[1].actions[0].command.device: no device 'p:lamb'") }, "\(read.errors)")
        #expect(read.errors.contains { $0.hasPrefix("etc/hearth.yaml:30: automations[2].starters[0]") }, "\(read.errors)")
    }

    @Test func configOwnedScenesAndAutomations_areReadOnlyThroughTheAPI() async throws {
        let config = try HearthConfig.parse(Self.yaml, file: "etc/hearth.yaml")
        let h = TestHome()
        let read = AutomationConfig.read(
            scenes: config.home.scenes, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines,
            state: h.core.state, catalog: h.core.catalog)
        let book = try SceneBook(core: h.core)
        #expect(book.loadConfigured(read.scenes).isEmpty)
        do {
            try book.delete("evening", as: admin)
            Issue.record("expected permissionDenied")
        } catch { #expect(error.message.contains("etc/hearth.yaml:4")) }
        let engine = AutomationEngine(core: h.core, scenes: book, clock: TestAutomationClock())
        #expect(await engine.loadConfigured(read.automations, refs: read.automationRefs).isEmpty)
        do {
            try await engine.delete("hall-light", as: admin)
            Issue.record("expected permissionDenied")
        } catch { #expect("\(error)".contains("etc/hearth.yaml:13")) }
    }
}
