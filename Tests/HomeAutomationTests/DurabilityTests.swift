import Foundation
import HashTreeCollections
import Synchronization
import DriverTesting
import GRDB
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Timers are rows with absolute due times in a real SQLite file: a delay, a `for` hold and a
/// schedule survive the engine going away (stopped, or abandoned mid-run as a killed process
/// would leave it) and a new engine on the same file picks them up.
@Suite(.timeLimit(.minutes(1))) struct DurabilityTests {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("automations-\(UUID().uuidString)")
    var path: String { dir.appendingPathComponent("hearth.sqlite").path }

    func open() throws -> AutomationStateStore {
        try HearthDatabase(path: path, extraMigrations: AutomationStateStore.registerMigrations(in:)).automationStore()
    }

    static let delayed = """
        {"id": "hall", "name": "Hall light",
         "starters": [{"id": "press", "event": {"device": "p:button", "trait": "Switch", "event": "InitialPress"}}],
         "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}, {"delay": "5m"},
                     {"command": {"device": "p:lamp", "trait": "OnOff", "command": "Off"}}]}
        """

    func restartDuringADelay(graceful: Bool, onRestart: Automation.OnRestart) async throws -> (TestHome, [RunTrace]) {
        defer { try? FileManager.default.removeItem(at: dir) }
        let h = TestHome()
        let clock1 = TestAutomationClock()
        let first = AutomationEngine(core: h.core, store: try open(), clock: clock1)
        let task1 = Task { await first.run() }
        var a = try Automation.json(Self.delayed)
        a.onRestart = onRestart
        try await first.save(a, as: admin)
        await first.start()
        h.press()
        await first.waitForTraces { $0["hall"]?.last?.steps.count == 2 }
        await clock1.manual.waitForSleepers(1)
        #expect(h.lampOn == true)
        let rows = try open().loadTimers()
        #expect(rows.map(\.kind) == ["delay"])
        #expect(rows.first?.dueAt == clock1.now().addingTimeInterval(300), "the due time is absolute")
        if graceful {
            task1.cancel()
            _ = await task1.value
        }  // else: abandoned mid-sleep, as a killed process leaves it (nothing cleaned up)

        // 2 minutes later, a new engine (a new process) on the same file.
        let clock2 = TestAutomationClock(epoch: clock1.now().addingTimeInterval(120))
        let second = AutomationEngine(core: h.core, store: try open(), clock: clock2)
        let task2 = Task { await second.run() }
        defer { task2.cancel() }
        await second.start()
        if onRestart == .resume {
            await clock2.manual.waitForSleepers(1)
            clock2.advance(.seconds(179))
            #expect(h.lampOn == true, "the remaining 3 minutes are not over")
            clock2.advance(.seconds(2))
            await second.waitForTraces { $0["hall"]?.last?.outcome == .completed }
        } else {
            await second.waitForTraces { $0["hall"]?.last?.outcome == .abandoned }
        }
        #expect(try open().loadTimers().isEmpty)
        return (h, try await second.runs("hall", as: admin))
    }

    /// A `for` hold is a row too: "above 30 °C for 10 minutes" held 4 minutes when the process
    /// died (abandoned, as `kill -9` leaves it) fires 6 minutes after the hold began on the new
    /// engine, not 10 after the restart, and not at all if the value fell meanwhile.
    @Test func forHold_continuesAcrossARestart_atItsAbsoluteDueTime() async throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let h = TestHome()
        let clock1 = TestAutomationClock()
        let first = AutomationEngine(core: h.core, store: try open(), clock: clock1)
        _ = Task { await first.run() }  // abandoned below, never cancelled: a killed process
        try await first.save(
            .json("""
                {"id": "hot", "name": "Too hot",
                 "starters": [{"attribute": {"device": "p:thermo", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "above": 3000, "for": "10m"}}],
                 "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
                """), as: admin)
        await first.start()
        h.temperature(3100)
        await first.waitForVersion(h.core.state.version)
        await clock1.manual.waitForSleepers(1)
        let rows = try open().loadTimers()
        #expect(rows.map(\.kind) == ["hold"])
        #expect(rows.first?.dueAt == clock1.now().addingTimeInterval(600), "the hold's due time is absolute")

        // 4 minutes later a new engine (a new process) on the same file: 6 minutes are left.
        let clock2 = TestAutomationClock(epoch: clock1.now().addingTimeInterval(240))
        let second = AutomationEngine(core: h.core, store: try open(), clock: clock2)
        let task2 = Task { await second.run() }
        defer { task2.cancel() }
        await second.start()
        await clock2.manual.waitForSleepers(1)
        clock2.advance(.seconds(350))
        #expect(h.lampOn != true, "the hold's remaining 6 minutes are not over")
        clock2.advance(.seconds(11))
        await second.waitForTraces { $0["hot"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
        #expect(try await second.runs("hot", as: admin).first?.cause.description.contains("hold continued after restart") == true)
        #expect(try open().loadTimers().isEmpty)
    }

    @Test func delay_resumesWithItsRemainingTime_afterAStop() async throws {
        let (h, runs) = try await restartDuringADelay(graceful: true, onRestart: .resume)
        #expect(h.lampOn == false)
        #expect(runs.first?.cause.description.contains("resumed after restart") == true)
    }

    @Test func delay_resumes_afterTheProcessWasAbandonedMidDelay() async throws {
        let (h, _) = try await restartDuringADelay(graceful: false, onRestart: .resume)
        #expect(h.lampOn == false)
        #expect(h.hardware.commands.count == 2, "the On is not sent again (at most once)")
    }

    @Test func delay_isAbandonedAndTraced_whenOnRestartSaysSo() async throws {
        let (h, runs) = try await restartDuringADelay(graceful: true, onRestart: .abandon)
        #expect(h.lampOn == true)
        #expect(runs.first?.reason?.contains("abandon") == true)
    }

    @Test func missedSchedule_runsOnceWithinCatchUp_elseIsTracedAsMissed() async throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        for (late, runs) in [(180.0, true), (3600.0, false)] {
            try? FileManager.default.removeItem(at: dir)
            let h = TestHome()
            // 2026-06-01 05:59:50 in Amsterdam.
            let clock1 = TestAutomationClock(epoch: Date(timeIntervalSince1970: 1_780_286_390))
            let first = AutomationEngine(core: h.core, store: try open(), clock: clock1, timeZone: TimeZone(identifier: "Europe/Amsterdam")!)
            try await first.save(
                .json(morningJSON), as: admin)
            await first.start()
            #expect(try open().loadTimers().map(\.kind) == ["schedule"])
            // Down from 05:59:50 until 06:00 + late.
            let clock2 = TestAutomationClock(epoch: Date(timeIntervalSince1970: 1_780_286_400 + late))
            let second = AutomationEngine(core: h.core, store: try open(), clock: clock2, timeZone: TimeZone(identifier: "Europe/Amsterdam")!)
            await second.start()
            let traces = try await second.runs("morning", as: admin)
            if runs {
                await second.waitForTraces { $0["morning"]?.last?.outcome == .completed }
                #expect(h.lampOn == true)
                #expect(traces.first?.cause.description.contains("catch-up: due 2026-06-01 06:00:00") == true)
            } else {
                #expect(traces.first?.outcome == .abandoned)
                #expect(h.hardware.commands.isEmpty)
            }
            // The next morning is planned.
            let next = try open().loadTimers().first
            #expect(next?.dueAt == Date(timeIntervalSince1970: 1_780_286_400 + 86_400))
        }
    }

    @Test func automations_andTheirState_persist() async throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let h = TestHome()
        let first = AutomationEngine(core: h.core, store: try open(), clock: TestAutomationClock())
        try await first.save(.json(Self.delayed), as: admin)
        try await first.setEnabled("hall", false, as: admin)
        let second = AutomationEngine(core: h.core, store: try open(), clock: TestAutomationClock())
        await second.start()
        let r = try await second.record("hall", as: member)
        #expect(r.state == "disabled")
        #expect(r.revision == 1)
        #expect(r.automation == (try Automation.json(Self.delayed)))
    }
}
