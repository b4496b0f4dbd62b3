import DriverAPI
import Foundation
import HashTreeCollections
import Synchronization
import DriverTesting
import HomeAutomation
import HomeCore
import HomeModel
import Testing

/// The engine on the core's tap, with a manual clock (each test its own clock and engine).
@Suite(.timeLimit(.minutes(1))) struct EngineTests {
    func engine(_ h: TestHome, clock: TestAutomationClock = TestAutomationClock(), scenes: SceneBook? = nil) -> (AutomationEngine, Task<Void, Never>) {
        let e = AutomationEngine(core: h.core, scenes: scenes, clock: clock, timeZone: TimeZone(identifier: "Europe/Amsterdam")!)
        let task = Task { await e.run() }
        return (e, task)
    }

    func runs(_ e: AutomationEngine, _ id: String) async -> [RunTrace] { (try? await e.runs(id, as: admin)) ?? [] }

    static let pressLamp = """
        {"id": "press-lamp", "name": "Press lamp",
         "starters": [{"id": "press", "event": {"device": "p:button", "trait": "Switch", "event": "InitialPress"}}],
         "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
        """

    /// Runs on every change of the thermometer's value, each run its own.
    static let counter = """
        {"id": "count", "name": "Counter", "mode": "parallel",
         "starters": [{"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "changes": true}}],
         "actions": [{"log": "seen"}]}
        """

    @Test func buttonEvent_switchesTheLamp_withAnAutomationOrigin() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        try await e.save(.json(Self.pressLamp), as: admin)
        await e.start()
        h.press()
        await e.waitForTraces { $0["press-lamp"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
        let cmd = try #require(h.hardware.commands.first)
        #expect(cmd.origin.hasPrefix("automation:press-lamp/"), "commands carry an automation origin: \(cmd.origin)")
        let trace = try #require(await runs(e, "press-lamp").first)
        #expect(trace.cause.starter == "press")
        #expect(trace.steps.first?.result == "ok")
        #expect(trace.latencyMicroseconds != nil)
    }

    @Test func threshold_withHysteresis_firesOnEntering_andRearmsOnlyPastTheBand() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        try await e.save(
            .json("""
                {"id": "frost", "name": "Frost guard",
                 "starters": [{"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "below": 200, "hysteresis": 50}}],
                 "actions": [{"log": "frost"}]}
                """), as: admin)
        await e.start()
        for v: Int64 in [250, 190, 180, 230, 210, 260, 199, 240, 251, 150] { h.temperature(v) }
        await e.waitForVersion(h.core.state.version)
        let fired = await runs(e, "frost").map { $0.cause.new }
        // 190 enters; 180/230/210 stay inside the band (< 250); 260 re-arms; 199 enters;
        // 240 stays; 251 re-arms; 150 enters.
        #expect(fired.reversed() == [.int(190), .int(199), .int(150)])
    }

    @Test func tap_isLossless_whereSubscriptionsCoalesce() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        try await e.save(.json(Self.counter), as: admin)
        await e.start()
        for v in 0..<40 { h.temperature(Int64(2000 + v)) }
        await e.waitForVersion(h.core.state.version)
        let seen = await runs(e, "count").compactMap { $0.cause.new?.intValue }.sorted()
        #expect(seen == (0..<40).map { Int64(2000 + $0) }, "every transition, in order, none coalesced")
        #expect(await e.droppedChanges == 0)
    }

    @Test func idleEngine_isNotHandedChanges_countsThemRead_andWakesForItsFirstAutomation() async throws {
        let h = TestHome()
        let e = AutomationEngine(core: h.core, clock: TestAutomationClock())
        await e.start()  // no automation, nothing pending: idle
        for v in 0..<20 { h.temperature(Int64(2000 + v)) }
        #expect(e.tap.isIdle)
        #expect(e.tap.depth == 0, "an idle engine is neither handed nor woken for changes")
        await e.waitForVersion(h.core.state.version)  // what the tap passed over counts as read
        #expect(await e.processedVersion == h.core.state.version)
        let task = Task { await e.run() }
        defer { task.cancel() }
        try await e.save(.json(Self.counter), as: admin)
        for v in 0..<10 { h.temperature(Int64(3000 + v)) }
        await e.waitForVersion(h.core.state.version)
        let seen = await runs(e, "count").compactMap { $0.cause.new?.intValue }.sorted()
        #expect(seen.suffix(9) == (1..<10).map { Int64(3000 + $0) }, "busy again: every transition reaches it")
        #expect(!e.tap.isIdle)
        try await e.delete("count", as: admin)
        for _ in 0..<400 where !e.tap.isIdle { try await Task.sleep(for: .milliseconds(10)) }
        #expect(e.tap.isIdle, "idle again once its last automation (and its runs) are gone")
        await e.waitForVersion(h.core.state.version)
    }

    @Test func idleTap_countsPassedOverChangesRead_onlyOnceWhatWasHandedOutIsProcessed() async throws {
        let h = TestHome()
        let tap = ChangeTap()
        h.core.installTap(tap)
        defer { h.core.installTap(nil) }
        h.temperature(1)  // offered: waits in the queue
        tap.setIdle(true)
        h.temperature(2)  // behind a waiting change: kept in order, with no items
        #expect(tap.depth == 2)
        let batch = try #require(await tap.next())
        let handed = try #require(batch.changes.last?.version)
        #expect(batch.changes.count == 2 && batch.changes[0].items.count == 1 && batch.changes[1].items.isEmpty)
        h.temperature(3)  // nothing waiting: passed over
        #expect(tap.depth == 0)
        let passed = h.core.state.version
        #expect(passed > handed)
        #expect(tap.skippedThrough(processed: handed - 1) == 0, "what was handed out is not processed yet")
        #expect(tap.skippedThrough(processed: handed) == passed)
        tap.setIdle(false)
        h.temperature(4)
        #expect(tap.depth == 1)
    }

    @Test func tapOverflow_isCountedAndTraced() async throws {
        let h = TestHome()
        let e = AutomationEngine(core: h.core, clock: TestAutomationClock(), tapCapacity: 5)
        try await e.save(.json(Self.pressLamp), as: admin)
        await e.start()  // tap installed, nobody reading yet
        for v in 0..<12 { h.temperature(Int64(v)) }
        #expect(e.tap.dropped == 7)
        #expect(e.tap.depth == 5)
        let task = Task { await e.run() }
        defer { task.cancel() }
        await e.waitForTraces { $0["press-lamp"]?.contains { $0.outcome == .dropped } == true }
        #expect(await e.droppedChanges == 7)
        // The newest change was dropped: the engine counts itself past it, so waiting for the
        // core's version returns (it used to wait for ever).
        let newest = h.core.state.version
        for _ in 0..<400 where await e.processedVersion < newest { try await Task.sleep(for: .milliseconds(50)) }
        #expect(await e.processedVersion >= newest, "waitForVersion(newest) would return")
    }

    @Test func forHold_firesOnlyWhenTheStateHeld() async throws {
        let h = TestHome()
        let clock = TestAutomationClock()
        let (e, task) = engine(h, clock: clock)
        defer { task.cancel() }
        try await e.save(
            .json("""
                {"id": "hot", "name": "Too hot",
                 "starters": [{"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "above": 3000, "for": "10m"}}],
                 "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
                """), as: admin)
        await e.start()
        h.temperature(3100)
        await e.waitForVersion(h.core.state.version)
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(300))
        h.temperature(2900)  // broken: the hold is cancelled
        await e.waitForVersion(h.core.state.version)
        clock.advance(.seconds(400))
        #expect(await runs(e, "hot").isEmpty)
        h.temperature(3200)
        await e.waitForVersion(h.core.state.version)
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(601))
        await e.waitForTraces { $0["hot"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
        #expect(await runs(e, "hot").first?.cause.description.contains("held") == true)
    }

    @Test func conditions_nearMissIsTraced_withTheValuesSeen() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        var a = try Automation.json(Self.pressLamp)
        a.conditions = .attribute(AttributeCondition(device: "p:thermo", trait: "TemperatureMeasurement", attribute: "MeasuredValue", above: 2500))
        try await e.save(a, as: admin)
        await e.start()
        h.press()
        await e.waitForTraces { $0["press-lamp"]?.count == 1 }
        let t = try #require(await runs(e, "press-lamp").first)
        #expect(t.outcome == .conditionFailed)
        #expect(t.isNearMiss)
        #expect(t.conditions.first?.saw.contains("1000") == true)
        #expect(h.hardware.commands.isEmpty)
    }

    @Test(arguments: [Automation.Mode.single, .restart, .queued])
    func modes_decideWhatASecondStartDoes(_ mode: Automation.Mode) async throws {
        let h = TestHome()
        let clock = TestAutomationClock()
        let (e, task) = engine(h, clock: clock)
        defer { task.cancel() }
        var a = try Automation.json(Self.pressLamp)
        a.mode = mode
        a.actions = [.delay(.seconds(60)), .command(CommandAction(device: "p:lamp", trait: "OnOff", command: "Toggle"))]
        try await e.save(a, as: admin)
        await e.start()
        h.press()
        await e.waitForTraces { $0["press-lamp"]?.count == 1 }
        await clock.manual.waitForSleepers(1)
        h.press()
        await e.waitForVersion(h.core.state.version)
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(61))
        let completed: @Sendable ([String: [RunTrace]]) -> Int = { ($0["press-lamp"] ?? []).filter { $0.outcome == .completed }.count }
        if mode == .queued {
            await e.waitForTraces { completed($0) == 1 }
            await clock.manual.waitForSleepers(1)
            clock.advance(.seconds(61))
        }
        let expected = mode == .queued ? 2 : 1
        await e.waitForTraces { t in completed(t) == expected && (t["press-lamp"] ?? []).allSatisfy { $0.outcome != .running } }
        let outcomes = await runs(e, "press-lamp").reversed().map(\.outcome)
        switch mode {
        case .single: #expect(outcomes == [.completed, .skipped])
        case .restart: #expect(outcomes == [.interrupted, .completed])
        case .queued: #expect(outcomes == [.completed, .completed])
        case .parallel: break
        }
        #expect(h.hardware.commands.count == (mode == .queued ? 2 : 1))
    }

    @Test func suppressFor_tracesAStartInsideTheWindow() async throws {
        let h = TestHome()
        let clock = TestAutomationClock()
        let (e, task) = engine(h, clock: clock)
        defer { task.cancel() }
        var a = try Automation.json(Self.pressLamp)
        a.suppressFor = .minutes(1)
        try await e.save(a, as: admin)
        await e.start()
        h.press()
        await e.waitForTraces { $0["press-lamp"]?.last?.outcome == .completed }
        h.press()
        await e.waitForTraces { $0["press-lamp"]?.count == 2 }
        #expect(await runs(e, "press-lamp").first?.outcome == .suppressed)
        clock.advance(.seconds(61))
        h.press()
        await e.waitForTraces { ($0["press-lamp"] ?? []).filter { $0.outcome == .completed }.count == 2 }
        #expect(h.hardware.commands.count == 2)
    }

    /// A plugin hands several messages over in one batch (the MQTT plugin does, for messages read
    /// back to back): 20.00 then 30.00 °C in one call. The state after it holds 30.00 only, but each
    /// value was accepted in turn and a starter sees both: it re-arms on 20 and fires on 30. A value
    /// the catalogue refuses in the middle of a batch is not seen.
    @Test func aBatchOfReports_reachesStartersValueByValue() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        try await e.save(
            .json("""
                {"id": "hot", "name": "Hot", "mode": "parallel",
                 "starters": [{"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "above": 2500, "hysteresis": 200}}],
                 "actions": [{"log": "hot"}]}
                """), as: admin)
        await e.start()
        func batch(_ values: [Value]) {
            h.driver.report(values.map {
                AttributeReport(localID: "thermo", trait: TemperatureMeasurementTrait.identifier, attribute: TemperatureMeasurementTrait.Attribute.measuredValue, value: $0)
            })
        }
        h.temperature(3000)  // fires once (from 1000)
        batch([.int(2000), .int(3000)])  // re-arms and fires again, in one call
        batch([.int(2000), .string("hot"), .int(3000)])  // the refused string in the middle changes nothing
        batch([.int(3100), .int(3000)])  // stays above: no new run
        await e.waitForVersion(h.core.state.version)
        let fired = await runs(e, "hot").reversed().map { $0.cause.old }
        #expect(fired == [.int(1000), .int(2000), .int(2000)], "each batch's 2000 re-arms, each 3000 fires: \(fired)")
    }

    @Test func loop_suspendsTheAutomation() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        // Whenever the lamp changes, toggle it: the driver's echo starts it again.
        try await e.save(
            .json("""
                {"id": "flip", "name": "Flip flop", "mode": "queued",
                 "starters": [{"attribute": {"device": "p:lamp", "trait": "OnOff", "attribute": "OnOff", "changes": true}}],
                 "actions": [{"if": {"condition": {"attribute": {"device": "p:lamp", "trait": "OnOff", "attribute": "OnOff", "equals": true}},
                                     "then": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "Off"}}],
                                     "else": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}}]}
                """), as: admin)
        await e.start()
        let notes = await e.notifications()
        h.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        await e.waitForTraces { $0["flip"]?.contains { $0.reason?.contains("loop") == true } == true }
        let record = try await e.record("flip", as: admin)
        let traces = await runs(e, "flip")
        let stopped = record.state == "suspended" || traces.contains { $0.reason?.contains("deep") == true }
        #expect(stopped)
        let sent = h.hardware.commands.count
        #expect(sent <= 21, "bounded: \(sent) commands")
        if record.state == "suspended" {
            var it = notes.makeAsyncIterator()
            #expect(await it.next()?.contains("loopDetected") == true)
        }
    }

    /// Names are unique as NamingRules compares them (case, spacing), through renames and deletes
    /// (the engine keeps each name's normalised form; this checks that the memory follows).
    @Test func names_areUnique_throughRenamesAndDeletes() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        func named(_ id: String, _ name: String) throws -> Automation {
            try .json(#"{"id": "\#(id)", "name": "\#(name)", "starters": [{"manual": {}}], "actions": [{"log": "x"}]}"#)
        }
        try await e.save(named("a", "Hall light"), as: admin)
        do {
            try await e.save(named("b", "HALL LIGHT"), as: admin)
            Issue.record("a second automation with the same name was saved")
        } catch {
            #expect((error as? AutomationError)?.issues.contains { $0.code == "nameTaken" } == true, "\(error)")
        }
        // Renamed: the old name is free, the new one taken.
        try await e.save(named("a", "Porch light"), as: admin)
        try await e.save(named("b", "Hall Light"), as: admin)
        await #expect(throws: AutomationError.self) { try await e.save(named("c", "porch light"), as: admin) }
        // Deleted: its name is free again.
        try await e.delete("a", as: admin)
        try await e.save(named("c", "porch light"), as: admin)
        #expect(try await e.list(as: admin).map(\.automation.name).sorted() == ["Hall Light", "porch light"])
    }

    @Test func permissions_membersRunManualOnly_adminsCreate() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        do {
            try await e.save(.json(Self.pressLamp), as: member)
            Issue.record("expected permissionDenied")
        } catch { #expect(errorCode(error) == .permissionDenied) }
        try await e.save(.json(Self.pressLamp), as: admin)
        do {
            try await e.runNow("press-lamp", as: member)
            Issue.record("expected permissionDenied")
        } catch { #expect(errorCode(error) == .permissionDenied) }
        var manual = try Automation.json(Self.pressLamp)
        manual.starters.append(Starter(id: "button-on-web", .manual))
        try await e.save(manual, ifRevision: 1, as: admin)
        do {
            try await e.save(manual, ifRevision: 1, as: admin)
            Issue.record("expected conflict")
        } catch { #expect(errorCode(error) == .conflict) }
        await e.start()
        try await e.runNow("press-lamp", as: member)
        await e.waitForTraces { $0["press-lamp"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
        #expect(try await e.list(as: member).count == 1, "members see automations")
        let app = Principal(id: "app:x", role: .app, scope: GrantScope(deviceTypes: nil, includeSensitive: false))
        #expect(try await e.list(as: app).isEmpty)
        do {
            try await e.delete("press-lamp", as: member)
            Issue.record("expected permissionDenied")
        } catch { #expect(errorCode(error) == .permissionDenied) }
    }

    @Test func sceneAction_andSceneCondition() async throws {
        let h = TestHome()
        let book = try SceneBook(core: h.core)
        try book.create(
            Scene(id: "bright", name: "Bright", structureID: h.structure, targets: [
                SceneTarget(device: "p:dim", deviceType: DimmableLightDeviceType.identifier, trait: LevelControlTrait.identifier, attribute: LevelControlTrait.Attribute.currentLevel, value: 200)
            ]), as: admin)
        let (e, task) = engine(h, scenes: book)
        defer { task.cancel() }
        try await e.save(
            .json("""
                {"id": "s", "name": "Scene on press",
                 "starters": [{"id": "press", "event": {"device": "p:button", "trait": "Switch", "event": "InitialPress"}}],
                 "conditions": {"not": {"scene": "bright"}},
                 "actions": [{"scene": "bright"}]}
                """), as: admin)
        await e.start()
        h.press()
        await e.waitForTraces { $0["s"]?.last?.outcome == .completed }
        #expect(book.isActive("bright"))
        h.press()
        await e.waitForTraces { $0["s"]?.count == 2 }
        #expect(await runs(e, "s").first?.outcome == .conditionFailed, "the scene is active now")
    }

    @Test func waitFor_continuesWhenTheConditionHolds_orTimesOut() async throws {
        let h = TestHome()
        let clock = TestAutomationClock()
        let (e, task) = engine(h, clock: clock)
        defer { task.cancel() }
        try await e.save(
            .json("""
                {"id": "w", "name": "Heater",
                 "starters": [{"id": "press", "event": {"device": "p:button", "trait": "Switch", "event": "InitialPress"}}],
                 "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}},
                             {"waitFor": {"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "above": 600}, "timeout": "6h"}},
                             {"command": {"device": "p:lamp", "trait": "OnOff", "command": "Off"}}]}
                """), as: admin)
        await e.start()
        h.temperature(100)
        h.press()
        await e.waitForTraces { $0["w"]?.last?.steps.count == 1 }
        h.temperature(500)
        await e.waitForVersion(h.core.state.version)
        #expect(h.lampOn == true)
        h.temperature(700)
        await e.waitForTraces { $0["w"]?.last?.outcome == .completed }
        #expect(h.lampOn == false)
        // Second run: the timeout passes.
        h.temperature(100)
        h.press()
        await e.waitForTraces { $0["w"]?.last?.steps.count == 1 && $0["w"]?.count == 2 }
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(6 * 3600 + 1))
        await e.waitForTraces { $0["w"]?.last?.outcome == .completed }
        #expect(await runs(e, "w").first?.steps.contains { $0.result == "timeout" } == true)
    }

    @Test func simulate_returnsWhatItWouldSend_andTouchesNoDevice() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        let a = try Automation.json("""
            {"id": "sim", "name": "Sim",
             "starters": [{"id": "press", "event": {"device": "p:button", "trait": "Switch", "event": "InitialPress"}}],
             "conditions": {"starter": "press"},
             "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}, {"delay": "5m"},
                         {"command": {"device": "p:dim", "trait": "LevelControl", "command": "MoveToLevel", "args": {"Level": 50, "TransitionTime": 0, "OptionsMask": 0, "OptionsOverride": 0}}}]}
            """)
        let trace = try await e.simulate(a, starter: "press", as: member)
        #expect(trace.outcome == .simulated)
        #expect(trace.steps.map(\.result) == ["wouldSend", "wouldWait", "wouldSend"])
        #expect(trace.steps[2].detail.contains("MoveToLevel"))
        #expect(h.hardware.commands.isEmpty)
        let other = try await e.simulate(a, starter: "manual", as: admin)
        #expect(other.steps.isEmpty && other.reason?.contains("would not run") == true)
    }

    @Test func timeStarter_firesAtTheLocalTime() async throws {
        let h = TestHome()
        // 2026-06-01 05:59:50 in Amsterdam (UTC+2).
        let clock = TestAutomationClock(epoch: Date(timeIntervalSince1970: 1_780_286_390))
        let (e, task) = engine(h, clock: clock)
        defer { task.cancel() }
        try await e.save(
            .json(morningJSON), as: admin)
        await e.start()
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(9))
        await e.waitForVersion(h.core.state.version)
        #expect(h.hardware.commands.isEmpty)
        clock.advance(.seconds(1))
        await e.waitForTraces { $0["morning"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
        #expect(await runs(e, "morning").first?.cause.description.contains("06:00:00") == true)
    }

    @Test func unsynchronisedClock_holdsWallClockStarters() async throws {
        let h = TestHome()
        // 05:59:00 in Amsterdam.
        let clock = TestAutomationClock(epoch: Date(timeIntervalSince1970: 1_780_286_340))
        clock.synced.withLock { $0 = false }
        let (e, task) = engine(h, clock: clock)
        defer { task.cancel() }
        try await e.save(
            .json(morningJSON), as: admin)
        await e.start()
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(5))  // the re-check: still unsynchronised
        await clock.manual.waitForSleepers(1)
        clock.synced.withLock { $0 = true }
        clock.advance(.seconds(5))  // synchronised now: the 06:00 instant is planned
        await clock.manual.waitForSleepers(1)
        #expect(h.hardware.commands.isEmpty)
        clock.advance(.seconds(50))
        await e.waitForTraces { $0["morning"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
    }

    /// The dispatch index is kept per automation: replacing or deleting one takes out only its
    /// own starters (the others on the same attribute still fire; a moved starter leaves its old key).
    @Test func replacingAndDeleting_changeOnlyThatAutomationsStarters() async throws {
        let h = TestHome()
        let (e, task) = engine(h)
        defer { task.cancel() }
        func cold(_ n: Int) throws -> Automation {
            try .json("""
                {"id": "t\(n)", "name": "T\(n)",
                 "starters": [{"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "below": 200}}],
                 "actions": [{"log": "cold"}]}
                """)
        }
        for n in 0..<3 { try await e.save(cold(n), as: admin) }
        await e.start()
        try await e.save(
            .json("""
                {"id": "t1", "name": "T1",
                 "starters": [{"attribute": {"device": "p:lamp", "trait": "OnOff", "attribute": "OnOff", "to": true}}],
                 "actions": [{"log": "lamp"}]}
                """), ifRevision: 1, as: admin)
        try await e.delete("t2", as: admin)
        h.temperature(150)
        await e.waitForVersion(h.core.state.version)
        #expect(await runs(e, "t0").count == 1)
        #expect(await runs(e, "t1").isEmpty, "t1's old thermometer starter is gone")
        #expect(await runs(e, "t2").isEmpty)
        h.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        await e.waitForVersion(h.core.state.version)
        #expect(await runs(e, "t1").first?.cause.new == .bool(true), "t1 watches the lamp now")
        // Saving t0 again (same starter) keeps exactly one entry for it: one run per crossing.
        try await e.save(cold(0), as: admin)
        h.temperature(250)
        h.temperature(150)
        await e.waitForVersion(h.core.state.version)
        #expect(await runs(e, "t0").count == 2)
    }
}
