import Foundation
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Run traces in a real SQLite file: they survive a new engine (a restart), at most 50 per
/// automation with the oldest dropped, written in batches without anyone asking.
@Suite(.timeLimit(.minutes(1))) struct TracePersistenceTests {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("automation-traces-\(UUID().uuidString)")
    var path: String { dir.appendingPathComponent("hearth.sqlite").path }

    func open() throws -> AutomationStateStore { try HearthDatabase.daemon(path: path).automationStore() }

    static let manual = """
        {"id": "now", "name": "Now", "starters": [{"id": "go", "manual": {}}],
         "conditions": {"attribute": {"device": "p:lamp", "trait": "OnOff", "attribute": "OnOff", "equals": false}},
         "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
        """

    @Test func traces_surviveARestart_boundedPerAutomation_oldestDropped() async throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let h = TestHome()
        let first = AutomationEngine(core: h.core, store: try open(), clock: TestAutomationClock())
        try await first.save(.json(Self.manual), as: admin)
        await first.start()
        // 55 starts: the first completes (the lamp goes on), the next 54 are near-misses.
        var ids: [String] = []
        for _ in 0..<55 {
            ids.append(try await first.runNow("now", as: admin))
            await first.waitForTraces { $0["now"]?.last?.outcome != .running }
        }
        let before = try await first.runs("now", as: admin)
        #expect(before.count == 50)
        await first.flushTraces()
        #expect(try open().loadTraces().count == 50, "the oldest 5 were dropped in the same transaction")

        let second = AutomationEngine(core: h.core, store: try open(), clock: TestAutomationClock())
        await second.start()
        let after = try await second.runs("now", as: admin)
        #expect(after == before)
        #expect(after.map(\.id) == Array(ids.suffix(50).reversed()))
        #expect(after.last?.outcome == .conditionFailed)
        #expect(try await second.trace(ids[5], as: member).conditions.first?.holds == false, "the oldest kept, with what it saw")
        // New runs do not reuse a kept run's ID.
        let next = try await second.runNow("now", as: admin)
        #expect(!ids.contains(next))
    }

    @Test func finishedRuns_areWrittenWithinAboutASecond_withoutAFlush() async throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, store: try open(), clock: TestAutomationClock())
        try await engine.save(.json(Self.manual), as: admin)
        await engine.start()
        let id = try await engine.runNow("now", as: admin)
        await engine.waitForTraces { $0["now"]?.last?.outcome == .completed }
        var written: [StoredTrace] = []
        for _ in 0..<50 where written.isEmpty {  // at most 5 s
            try await Task.sleep(for: .milliseconds(100))
            written = try open().loadTraces()
        }
        #expect(written.map(\.id) == [id])
        #expect(written.first?.outcome == "completed")
    }

    @Test func aRunGoingAtShutdown_readsBackAsInterrupted() async throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let h = TestHome()
        let clock = TestAutomationClock()
        let first = AutomationEngine(core: h.core, store: try open(), clock: clock)
        let task = Task { await first.run() }
        var a = try Automation.json(DurabilityTests.delayed)
        a.onRestart = .abandon
        try await first.save(a, as: admin)
        await first.start()
        h.press()
        await first.waitForTraces { $0["hall"]?.last?.steps.count == 2 }
        let runID = try #require(try await first.runs("hall", as: admin).first?.id)
        task.cancel()
        _ = await task.value

        let second = AutomationEngine(core: h.core, store: try open(), clock: TestAutomationClock(epoch: clock.now().addingTimeInterval(60)))
        await second.start()
        let runs = try await second.runs("hall", as: admin)
        let old = try #require(runs.first { $0.id == runID })
        #expect(old.outcome == .interrupted)
        #expect(old.steps.count == 2, "what it did before the stop is kept")
        #expect(runs.contains { $0.outcome == .abandoned }, "and the abandoned delay is traced beside it")
    }
}
