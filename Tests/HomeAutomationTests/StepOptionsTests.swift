import DriverAPI
import DriverTesting
import Foundation
import HomeAutomation
import HomeCore
import HomeModel
import Synchronization
import Testing

/// A command step's own `timeout` and `continueOnError` (design §6.3): a device that does not
/// answer fails the step as `timeout` on the engine's clock; with `continueOnError` the run
/// goes on, without it the run fails there.
@Suite(.timeLimit(.minutes(1))) struct StepOptionsTests {
    /// A plugin whose device never answers (until the command is cancelled).
    final class SilentHardware: CommandHandler {
        let asked = Mutex(0)
        func handle(_ command: DriverCommand) async throws -> Value {
            asked.withLock { $0 += 1 }
            try await Task.sleep(for: .seconds(30))
            return .null
        }
        func write(_ write: DriverWrite) async throws {}
    }

    static func twoSteps(_ id: String, continueOnError: Bool) -> String {
        """
        {"id": "\(id)", "name": "\(id.replacingOccurrences(of: "-", with: " "))", "starters": [{"manual": {}}],
         "actions": [{"command": {"device": "s:slow", "trait": "OnOff", "command": "On", "timeout": "2s", "continueOnError": \(continueOnError)}},
                     {"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
        """
    }

    @Test func aSilentDevice_timesOut_andContinueOnErrorGoesOn() async throws {
        let h = TestHome()
        let silent = SilentHardware()
        let s = h.core.context(for: "s")
        h.core.setCommandHandler(silent, for: "s")
        s.publish(Devices.lamp("slow", name: "Slow Lamp"))
        let clock = TestAutomationClock()
        let engine = AutomationEngine(core: h.core, clock: clock)
        let service = Task { await engine.run() }
        defer { service.cancel() }
        try await engine.save(.json(Self.twoSteps("goes-on", continueOnError: true)), as: admin)
        try await engine.save(.json(Self.twoSteps("stops", continueOnError: false)), as: admin)
        await engine.start()

        // Without continueOnError: failed at the first step; the lamp stays off.
        let stopped = try await engine.runNow("stops", as: admin)
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(1))
        #expect(try await engine.trace(stopped, as: admin).outcome == .running, "within its timeout it waits")
        clock.advance(.seconds(1))
        await engine.waitForTraces { $0["stops"]?.last?.outcome == .failed }
        let failed = try await engine.trace(stopped, as: admin)
        #expect(failed.steps.map(\.result) == ["timeout"], "\(failed.steps)")
        #expect(failed.steps.first?.message?.contains("within the step's timeout of 2s") == true, "\(failed.steps)")
        #expect(h.lampOn == false)

        // With it: the timeout is traced and the next step runs.
        let going = try await engine.runNow("goes-on", as: admin)
        await clock.manual.waitForSleepers(1)
        clock.advance(.seconds(2))
        await engine.waitForTraces { $0["goes-on"]?.last?.outcome == .completed }
        let completed = try await engine.trace(going, as: admin)
        #expect(completed.steps.map(\.result) == ["timeout", "ok"], "\(completed.steps)")
        #expect(completed.steps.first?.message?.contains("continueOnError") == true)
        #expect(h.lampOn == true)
        #expect(silent.asked.withLock { $0 } == 2, "each command was sent once, not retried")
    }

    @Test func stepOptions_areValidated_andRoundTripThroughJSON() async throws {
        let h = TestHome()
        let engine = AutomationEngine(core: h.core, clock: TestAutomationClock())
        let a = try Automation.json(Self.twoSteps("goes-on", continueOnError: true).replacingOccurrences(of: "s:slow", with: "p:dim"))
        #expect(await engine.validate(a).isEmpty)
        #expect(try Automation.json(String(decoding: JSONEncoder().encode(a), as: UTF8.self)) == a)
        guard case .command(let c) = a.actions[0] else { Issue.record("expected a command"); return }
        #expect(c.timeout == .seconds(2))
        #expect(c.continueOnError == true)
        let tooShort = try Automation.json(Self.twoSteps("short", continueOnError: false).replacingOccurrences(of: "s:slow", with: "p:dim").replacingOccurrences(of: "\"2s\"", with: "\"10ms\""))
        let issues = await engine.validate(tooShort)
        #expect(issues.map(\.code) == ["durationOutOfRange"])
        #expect(issues.first?.path == "actions[0].command.timeout")
    }
}
