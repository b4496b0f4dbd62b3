import DriverTesting
import Foundation
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// `hearth backup` / `restore` carry scenes, automations and pending timers: a backup taken
/// during a 5-minute delay, restored into another file, lets a new engine finish the run.
@Suite(.timeLimit(.minutes(1))) struct BackupRoundTripTests {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("automation-backup-\(UUID().uuidString)")
    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    @Test func backupDuringADelay_restoredElsewhere_keepsScenesAutomationsAndTheTimer() async throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try HearthDatabase.daemon(path: path("hearth.sqlite"))
        let h = TestHome()
        let scenes = try SceneBook(core: h.core, store: source.automationStore())
        let evening = try scenes.create(SceneTests().evening(h), as: admin)
        let clock1 = TestAutomationClock()
        let first = AutomationEngine(core: h.core, store: source.automationStore(), clock: clock1)
        let task1 = Task { await first.run() }
        try await first.save(.json(DurabilityTests.delayed), as: admin)
        try await first.save(.json(morningJSON), as: admin)
        try await first.setEnabled("morning", false, as: admin)
        await first.start()
        h.press()
        await first.waitForTraces { $0["hall"]?.last?.steps.count == 2 }
        #expect(h.lampOn == true)

        let file = path("backup.json")
        try source.backup(to: file)
        task1.cancel()
        _ = await task1.value
        let export = try source.readBackup(file)
        #expect(export.formatVersion == 2)
        #expect(export.automation?.scenes.count == 1)
        #expect(export.automation?.sceneTargets.count == 2)
        #expect(export.automation?.automations.count == 2)
        #expect(export.automation?.timers.count == 1, "the pending delay")

        // Restored into a fresh daemon file (which already had something else in it).
        let target = try HearthDatabase.daemon(path: path("restored.sqlite"))
        try target.automationStore().saveAutomation(StoredAutomation(id: "stale", name: "Stale", state: "enabled", graphJSON: "{}", revision: 3))
        try target.restore(target.readBackup(file))
        let store = target.automationStore()
        #expect(try store.loadScenes() == [evening])
        #expect(try store.loadAutomations().map(\.id) == ["hall", "morning"], "replaced, not merged")
        #expect(try store.loadTimers() == source.automationStore().loadTimers())

        // A new engine on the restored file, 2 minutes after the backup: the delay resumes.
        let clock2 = TestAutomationClock(epoch: clock1.now().addingTimeInterval(120))
        let second = AutomationEngine(core: h.core, store: store, clock: clock2)
        let task2 = Task { await second.run() }
        defer { task2.cancel() }
        await second.start()
        #expect(try await second.record("morning", as: admin).state == "disabled")
        await clock2.manual.waitForSleepers(1)
        clock2.advance(.seconds(181))
        await second.waitForTraces { $0["hall"]?.last?.outcome == .completed }
        #expect(h.lampOn == false)
        #expect(h.hardware.commands.count == 2, "On before the backup, Off after the restore; nothing twice")
    }

    @Test func aBackupWithAutomations_intoAFileWithoutTheirTables_isRefused_andNothingChanges() throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try HearthDatabase.daemon(path: path("hearth.sqlite"))
        try source.automationStore().saveAutomation(StoredAutomation(id: "a", name: "A", state: "enabled", graphJSON: "{}", revision: 1))
        var export = try source.exportLayout()
        let bare = try HearthDatabase(path: path("bare.sqlite"))
        let error = #expect(throws: HomeError.self) { try bare.restore(export) }
        #expect(error?.message.contains("no automation tables") == true)

        // A timer of an automation the backup lacks, or a column the table lacks: refused as a whole.
        export.automation?.timers.append(["id": .text("t"), "automation_id": .text("ghost"), "kind": .text("delay"), "due_at": .real(0), "payload_json": .text("{}")])
        export.automation?.automations[0]["evil\"; DROP TABLE scene; --"] = .integer(1)
        let target = try HearthDatabase.daemon(path: path("target.sqlite"))
        let refused = #expect(throws: HomeError.self) { try target.restore(export) }
        #expect(refused?.code == .invalidArgument)
        #expect(refused?.message.contains("automation ghost") == true)
        #expect(refused?.message.contains("unknown columns") == true)
        #expect(try target.automationStore().loadAutomations().isEmpty)
    }
}
