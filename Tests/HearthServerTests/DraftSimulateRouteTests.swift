import Foundation
import HearthServer
import HomeAutomation
import HomeCore
import HomeModel
import Synchronization
import Testing

/// `POST /automations/simulate` over real HTTP: the web page's Test button for a draft not saved
/// yet. It answers like `POST /automations/{id}/simulate` (the trace with `wouldSend` steps),
/// saves nothing, sends nothing, refuses a draft with errors with its issues, and only admins use it.
@Suite struct DraftSimulateRouteTests {
    static let draft = #"{"id":"draft","name":"Draft","starters":[{"id":"go","manual":{}}],"actions":[{"command":{"device":"test:lamp","trait":"OnOff","command":"On"}},{"delay":"5m"}]}"#

    @Test func draft_simulatesWithoutSavingOrSending() async throws {
        try await TestHome.with(automations: AutomationRoutesTests.make) { home in
            let admin = try home.adminToken()
            let sim = try await home.call("POST", "automations/simulate", token: admin, body: #"{"automation":\#(Self.draft),"starter":"go"}"#)
            #expect(sim.status == 200, "\(sim.text)")
            #expect(sim.json["outcome"] == "simulated", "\(sim.text)")
            #expect(sim.json["automation"] == "draft")
            #expect(sim.json["cause"]?["starter"] == "go", "\(sim.text)")
            let steps = try #require(sim.json["steps"]?.listValue)
            #expect(steps.first?["result"] == "wouldSend", "\(sim.text)")
            #expect(steps.count == 2 && steps.last?["result"] == "wouldWait", "\(sim.text)")
            #expect(home.driver.seen.withLock { $0.isEmpty }, "a simulated draft sends nothing")
            // Nothing saved: the draft is not an automation.
            #expect(try await home.call("GET", "automations/draft", token: admin).status == 404)
            #expect(try await home.call("GET", "automations", token: admin).json.listValue?.isEmpty == true)
        }
    }

    @Test func draft_withErrors_isRefusedWithItsIssues_andConditionsAreEvaluated() async throws {
        try await TestHome.with(automations: AutomationRoutesTests.make) { home in
            let admin = try home.adminToken()
            let bad = Self.draft.replacingOccurrences(of: #""command":"On""#, with: #""command":"Onn""#)
            let refused = try await home.call("POST", "automations/simulate", token: admin, body: #"{"automation":\#(bad)}"#)
            #expect(refused.status == 400, "\(refused.text)")
            let issue = refused.json["error"]?["issues"]?.listValue?.first
            #expect(issue?["path"] == "actions[0].command.command", "\(refused.text)")
            #expect(issue?["code"] == "unknownCommand", "\(refused.text)")
            // A condition that does not hold now: the trace says it would not run, and sends nothing.
            let guarded = Self.draft.replacingOccurrences(
                of: #""actions""#, with: #""conditions":{"attribute":{"device":"test:lamp","trait":"OnOff","attribute":"OnOff","equals":true}},"actions""#)
            let sim = try await home.call("POST", "automations/simulate", token: admin, body: #"{"automation":\#(guarded)}"#)
            #expect(sim.status == 200, "\(sim.text)")
            #expect(sim.json["conditions"]?.listValue?.first?["holds"] == false, "\(sim.text)")
            #expect(sim.json["reason"]?.stringValue?.contains("would not run") == true, "\(sim.text)")
            #expect(sim.json["steps"]?.listValue?.isEmpty ?? true, "\(sim.text)")
            // Not a body with an automation.
            #expect(try await home.call("POST", "automations/simulate", token: admin, body: #"{"starter":"go"}"#).status == 400)
        }
    }

    @Test func draft_isForAdminsOnly() async throws {
        try await TestHome.with(automations: AutomationRoutesTests.make) { home in
            let member = try home.memberToken()
            let refused = try await home.call("POST", "automations/simulate", token: member, body: #"{"automation":\#(Self.draft)}"#)
            #expect(refused.status == 403, "\(refused.text)")
            #expect(refused.json["error"]?["code"] == "permissionDenied")
            #expect(try await home.call("POST", "automations/simulate", body: #"{"automation":\#(Self.draft)}"#).status == 401)
            #expect(home.driver.seen.withLock { $0.isEmpty })
        }
    }
}
