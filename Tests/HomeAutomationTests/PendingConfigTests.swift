import DriverAPI
import Foundation
import HearthConfiguration
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Config automations that name devices no plugin has reported yet (a fresh database's first
/// start) wait, said where and for which devices, and load when a late plugin reports them.
@Suite(.timeLimit(.minutes(1))) struct PendingConfigTests {
    static let yaml = """
        automations:
          - id: late-light
            name: Late light
            starters:
              - { id: press, event: { device: late:button, trait: Switch, event: InitialPress } }
            actions:
              - command: { device: late:relay, trait: OnOff, command: On }
          - id: typo
            name: Typo
            starters: [ { manual: {} } ]
            actions:
              - command: { device: late:relay, trait: OnOff, command: Onn }
          - id: now
            name: Now
            starters: [ { manual: {} } ]
            actions:
              - command: { device: p:lamp, trait: OnOff, command: On }
        """

    @Test func pendingAutomations_loadWhenALatePluginReportsTheirDevices() async throws {
        let config = try HearthConfig.parse(Self.yaml, file: "etc/hearth.yaml")
        let h = TestHome()
        let read = AutomationConfig.read(
            scenes: nil, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines, state: h.core.state,
            catalog: h.core.catalog)
        #expect(read.errors.isEmpty, "a device not reported yet is not an error: \(read.errors)")
        #expect(read.automations.map(\.id) == ["now"])
        #expect(read.pending.map(\.id) == ["late-light", "typo"])
        #expect(
            read.pendingNotes.first?.hasPrefix(
                "etc/hearth.yaml:2: automations[0] (late-light): pending: waits for 'late:button', 'late:relay' (no plugin has reported them yet); it loads once they appear"
            ) == true, "\(read.pendingNotes)")
        #expect(read.pendingNotes.first?.contains("if it is a typo: starters[0].event.device: did you mean") == true, "the closest names, for a typo")

        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock())
        let problems = await engine.loadConfigured(read.automations, refs: read.automationRefs, pending: read.pending)
        #expect(problems.isEmpty)
        #expect(await engine.pendingConfigured == ["late-light": "etc/hearth.yaml:2", "typo": "etc/hearth.yaml:8"])
        let task = Task { await engine.run() }
        defer { task.cancel() }
        await engine.start()

        // The late plugin reports its button first: still waiting for the relay.
        let late = h.core.context(for: "late")
        let relay = FakeHardware(context: late)
        h.core.setCommandHandler(relay, for: "late")
        late.publish(Devices.button("button", name: "Late Button"))
        await engine.waitForVersion(h.core.state.version)
        #expect(await engine.pendingConfigured.keys.sorted() == ["late-light", "typo"])
        #expect((try? await engine.record("late-light", as: admin)) == nil)

        // Then the relay: late-light loads; typo now compiles far enough to show its real error and is refused.
        late.publish(Devices.lamp("relay", name: "Late Relay"))
        await engine.waitForVersion(h.core.state.version)
        #expect(await engine.pendingConfigured.isEmpty)
        let loaded = try await engine.record("late-light", as: admin)
        #expect(loaded.source == "config")
        #expect(loaded.configRef == "etc/hearth.yaml:2")
        #expect((try? await engine.record("typo", as: admin)) == nil, "an unknown command is refused once the device is known")

        // And it works: the late button switches the late relay.
        late.emit(EventReport(localID: "button", trait: SwitchTrait.identifier, event: SwitchTrait.Event.initialPress, fields: ["NewPosition": 1]))
        await engine.waitForTraces { $0["late-light"]?.last?.outcome == .completed }
        #expect(relay.commands.map(\.command) == [OnOffTrait.Command.on])
    }

    @Test func aReload_replacesThePendingSet_andSaysWhichArePending() async throws {
        let config = try HearthConfig.parse(Self.yaml, file: "etc/hearth.yaml")
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock())
        let outcome = await ConfigReload.apply(
            scenes: nil, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines, book: nil, engine: engine)
        #expect(outcome.applied)
        #expect(outcome.errors.isEmpty)
        #expect(outcome.automations == 1)
        #expect(outcome.pending.count == 2)
        #expect(outcome.pending.first?.contains("(late-light): pending: waits for 'late:button', 'late:relay'") == true, "\(outcome.pending)")
        #expect(outcome.description.contains("2 pending"))
        // A reload without them forgets them.
        let none = try HearthConfig.parse("automations: []\n", file: "etc/hearth.yaml")
        let second = await ConfigReload.apply(
            scenes: nil, automations: none.home.automations, file: "etc/hearth.yaml", lines: none.home.lines, book: nil, engine: engine)
        #expect(second.pending.isEmpty)
        #expect(await engine.pendingConfigured.isEmpty)
    }

    static let scenesYAML = """
        scenes:
          - id: late-scene
            name: Late scene
            targets:
              - { device: late:relay, trait: OnOff, attribute: OnOff, value: true }
          - id: now-scene
            name: Now scene
            targets:
              - { device: p:lamp, trait: OnOff, attribute: OnOff, value: true }
        automations:
          - id: recall-late
            name: Recall late
            starters: [ { manual: {} } ]
            actions:
              - scene: late-scene
        """

    /// Config scenes wait like automations: a scene naming a device not reported yet is pending
    /// (and an automation recalling it waits with it); both load when the device appears, the
    /// scene into the real SQLite file.
    @Test func pendingScenes_waitForTheirDevices_andLoadWhenTheyAppear() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pending-scenes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try HearthDatabase(path: dir.appendingPathComponent("hearth.sqlite").path, extraMigrations: AutomationStateStore.registerMigrations(in:))
        let config = try HearthConfig.parse(Self.scenesYAML, file: "etc/hearth.yaml")
        let h = TestHome()
        let book = try SceneBook(core: h.core, store: db.automationStore())
        let read = AutomationConfig.read(
            scenes: config.home.scenes, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines,
            state: h.core.state, catalog: h.core.catalog)
        #expect(read.errors.isEmpty, "a device not reported yet is not an error: \(read.errors)")
        #expect(read.scenes.map(\.id) == ["now-scene"])
        #expect(read.pendingScenes.map(\.id) == ["late-scene"])
        #expect(read.pending.map(\.id) == ["recall-late"], "it recalls a pending scene")
        #expect(read.pendingNotes.contains(
            "etc/hearth.yaml:2: scenes[0] (late-scene): pending: waits for 'late:relay' (no plugin has reported it yet); it loads once it appears"),
            "\(read.pendingNotes)")
        #expect(read.pendingNotes.contains { $0.contains("(recall-late): pending: waits for scene 'late-scene'") }, "\(read.pendingNotes)")

        book.loadConfigured(read.scenes)
        let engine = AutomationEngine(core: h.core, scenes: book, clock: TestAutomationClock())
        let problems = await engine.loadConfigured(read.automations, refs: read.automationRefs, pending: read.pending, pendingScenes: read.pendingScenes)
        #expect(problems.isEmpty)
        #expect(await engine.pendingConfiguredScenes == ["late-scene": "etc/hearth.yaml:2"])
        #expect(await engine.pendingConfigured.keys.sorted() == ["recall-late"])
        #expect((try? book.scene("late-scene", as: admin)) == nil)
        let task = Task { await engine.run() }
        defer { task.cancel() }
        await engine.start()

        // The late plugin reports the relay: the scene loads, then the automation that recalls it.
        let late = h.core.context(for: "late")
        let relay = FakeHardware(context: late)
        h.core.setCommandHandler(relay, for: "late")
        late.publish(Devices.lamp("relay", name: "Late Relay"))
        await engine.waitForVersion(h.core.state.version)
        #expect(await engine.pendingConfiguredScenes.isEmpty)
        #expect(await engine.pendingConfigured.isEmpty)
        let scene = try book.scene("late-scene", as: admin)
        #expect(scene.source == "config")
        #expect(scene.configRef == "etc/hearth.yaml:2")
        #expect(try db.automationStore().loadScenes().map(\.id).sorted() == ["late-scene", "now-scene"], "kept in the file")
        try await engine.runNow("recall-late", as: admin)
        await engine.waitForTraces { $0["recall-late"]?.last?.outcome == .completed }
        #expect(relay.commands.map(\.command) == [OnOffTrait.Command.on])
    }

    @Test func aReload_saysWhichScenesArePending() async throws {
        let config = try HearthConfig.parse(Self.scenesYAML, file: "etc/hearth.yaml")
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        let engine = AutomationEngine(core: h.core, scenes: book, clock: TestAutomationClock())
        let outcome = await ConfigReload.apply(
            scenes: config.home.scenes, automations: config.home.automations, file: "etc/hearth.yaml", lines: config.home.lines, book: book,
            engine: engine)
        #expect(outcome.applied, "\(outcome)")
        #expect(outcome.scenes == 1)
        #expect(outcome.automations == 0)
        #expect(outcome.pending.count == 2, "\(outcome.pending)")
        #expect(outcome.pending.first?.contains("scenes[0] (late-scene): pending: waits for 'late:relay'") == true, "\(outcome.pending)")
        #expect(outcome.report.pending.first?.line == 2)
        #expect(outcome.description.contains("2 pending"))
    }
}
