import DriverAPI
import Foundation
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Synchronization
import Testing

/// Runtime re-validation (design §6.5): an automation whose device leaves the home becomes
/// inert with `deviceRemoved` issues, announced once; when the device is back it runs again.
@Suite(.timeLimit(.minutes(1))) struct RevalidationTests {
    static let buttonLamp = """
        {"id": "button-lamp", "name": "Button lamp",
         "starters": [{"id": "press", "event": {"device": "p:button", "trait": "Switch", "event": "InitialPress"}}],
         "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
        """

    @Test func aDecommissionedDevice_makesTheAutomationInert_untilItIsBack() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("revalidate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try HearthDatabase(path: dir.appendingPathComponent("hearth.sqlite").path, extraMigrations: AutomationStateStore.registerMigrations(in:))
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, store: db.automationStore(), clock: TestAutomationClock())
        let lines = Mutex<[String]>([])
        let notes = await engine.notifications()
        let reader = Task { for await l in notes { lines.withLock { $0.append(l) } } }
        defer { reader.cancel() }
        let service = Task { await engine.run() }
        defer { service.cancel() }
        try await engine.save(.json(Self.buttonLamp), as: admin)
        await engine.start()

        h.press()
        await engine.waitForTraces { $0["button-lamp"]?.last?.outcome == .completed }
        #expect(h.lampOn == true)
        h.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, false)

        // The lamp is decommissioned: the automation stays listed, inert, saying why.
        try h.core.home(for: .system).edit(.decommission("p:lamp"))
        await engine.waitForVersion(h.core.state.version)
        let inert = try await engine.record("button-lamp", as: admin)
        let issue = try #require(inert.issues.first { $0.code == "deviceRemoved" }, "\(inert.issues)")
        #expect(issue.path == "actions[0].command.device")
        #expect(issue.message.contains("p:lamp"), "\(issue.message)")
        #expect(try await engine.automation("button-lamp", as: admin).problems.contains { $0.code == "deviceRemoved" }, "the API's issues")
        do {
            try await engine.runNow("button-lamp", as: admin)
            Issue.record("an inert automation does not run")
        } catch {
            #expect(errorCode(error) == .notFound)
            #expect("\(error)".contains("inert"))
        }
        let runs = try await engine.runs("button-lamp", as: admin).count
        h.press()
        await engine.waitForVersion(h.core.state.version)
        #expect(try await engine.runs("button-lamp", as: admin).count == runs, "the button starts nothing")
        #expect(h.hardware.commands.filter { $0.command == OnOffTrait.Command.on }.count == 1)

        // The lamp goes away altogether (another change to it): still said once.
        h.driver.remove(device: "lamp")
        await engine.waitForVersion(h.core.state.version)
        try await Self.until { lines.withLock { $0.contains { $0.contains("button-lamp is inert") } } }
        #expect(lines.withLock { $0.filter { $0.contains("button-lamp is inert") } }.count == 1, "\(lines.withLock { $0 })")
        #expect(lines.withLock { $0.first { $0.contains("is inert") } }?.contains("p:lamp left the home (used at actions[0].command.device)") == true)

        // It comes back (the plugin reports it again, commissioned from its hint): it runs again.
        h.driver.publish(Devices.lamp("lamp", name: "Floor Lamp"))
        await engine.waitForVersion(h.core.state.version)
        #expect(try await engine.record("button-lamp", as: admin).issues.isEmpty)
        try await Self.until { lines.withLock { $0.contains { $0.contains("button-lamp: its devices are back") } } }
        h.press()
        await engine.waitForTraces { $0["button-lamp"]?.last?.outcome == .completed && $0["button-lamp"]?.count == runs + 1 }
        #expect(h.lampOn == true)
    }

    /// Polls `condition` (bounded: 2 s).
    static func until(_ condition: () -> Bool) async throws {
        for _ in 0..<200 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }
}
