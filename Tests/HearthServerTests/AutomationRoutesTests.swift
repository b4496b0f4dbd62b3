import Foundation
import HearthServer
import HomeAutomation
import HomeCore
import HomeModel
import Synchronization
import Testing

/// `/scenes` and `/automations` over real HTTP (issue 18): members recall and read; admins
/// create, edit (revision checked) and delete; validate returns every issue; simulate sends nothing.
@Suite struct AutomationRoutesTests {
    static func make(_ core: HomeCore) throws -> (SceneBook, AutomationEngine) {
        let scenes = try SceneBook(core: core)
        return (scenes, AutomationEngine(core: core, scenes: scenes))
    }

    static let scene = #"{"id":"evening","name":"Evening","targets":[{"device":"test:lamp","trait":"OnOff","attribute":"OnOff","value":true}]}"#

    @Test func scenes_membersRecall_adminsEdit() async throws {
        try await TestHome.with(automations: Self.make) { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            let refused = try await home.call("POST", "scenes", token: member, body: Self.scene)
            #expect(refused.status == 403, "\(refused.text)")
            let made = try await home.call("POST", "scenes", token: admin, body: Self.scene)
            #expect(made.status == 201, "\(made.text)")
            #expect(made.json["revision"] == 1)
            #expect(made.json["isActive"] == false)
            let recall = try await home.call("POST", "scenes/evening/recall", token: member)
            #expect(recall.status == 200, "\(recall.text)")
            #expect(recall.json["failed"] == 0)
            let listed = try await home.call("GET", "scenes", token: member)
            #expect(listed.json.listValue?.first?["isActive"] == true, "\(listed.text)")
            let stale = try await home.call("PUT", "scenes/evening?revision=7", token: admin, body: Self.scene)
            #expect(stale.status == 409, "\(stale.text)")
            let edited = try await home.call("PUT", "scenes/evening?revision=1", token: admin, body: Self.scene.replacingOccurrences(of: "true", with: "false"))
            #expect(edited.status == 200, "\(edited.text)")
            #expect(edited.json["revision"] == 2)
            #expect(try await home.call("DELETE", "scenes/evening", token: member).status == 403)
            #expect(try await home.call("DELETE", "scenes/evening", token: admin).status == 204)
        }
    }

    @Test func automations_validateSaveRunSimulateAndTraces() async throws {
        try await TestHome.with(automations: Self.make) { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            let bad = #"{"id":"a","name":"A","starters":[{"manual":{}}],"actions":[{"command":{"device":"test:lamb","trait":"OnOff","command":"Onn"}}]}"#
            let validated = try await home.call("POST", "automations/validate", token: member, body: bad)
            #expect(validated.status == 200)
            #expect(validated.json["issues"]?.listValue?.first?["code"] == "unknownDevice", "\(validated.text)")
            #expect(validated.json["issues"]?.listValue?.first?["suggestion"]?.stringValue?.contains("test:lamp") == true)
            let refused = try await home.call("POST", "automations", token: admin, body: bad)
            #expect(refused.status == 400)
            #expect(refused.json["error"]?["issues"]?.listValue?.first?["path"] == "actions[0].command.device", "\(refused.text)")

            let good = #"{"id":"a","name":"A","starters":[{"manual":{}}],"actions":[{"command":{"device":"test:lamp","trait":"OnOff","command":"On"}}]}"#
            #expect(try await home.call("POST", "automations", token: member, body: good).status == 403)
            let saved = try await home.call("POST", "automations", token: admin, body: good)
            #expect(saved.status == 201, "\(saved.text)")
            #expect(saved.json["revision"] == 1)
            let sim = try await home.call("POST", "automations/a/simulate", token: member, body: "{}")
            #expect(sim.json["steps"]?.listValue?.first?["result"] == "wouldSend", "\(sim.text)")
            #expect(home.driver.seen.withLock { $0.isEmpty }, "simulate sends nothing")
            let run = try await home.call("POST", "automations/a/run", token: member)
            #expect(run.status == 202, "\(run.text)")
            let runID = try #require(run.json["run"]?.stringValue)
            var trace = try await home.call("GET", "runs/\(runID)", token: member)
            for _ in 0..<200 where trace.json["outcome"] != "completed" {
                try await Task.sleep(for: .milliseconds(10))
                trace = try await home.call("GET", "runs/\(runID)", token: member)
            }
            #expect(trace.json["outcome"] == "completed", "\(trace.text)")
            let runs = try await home.call("GET", "automations/a/runs", token: admin)
            #expect(runs.json.listValue?.first?["id"]?.stringValue == runID)
            #expect(try await home.call("PUT", "automations/a?revision=5", token: admin, body: good).status == 409)
            #expect(try await home.call("POST", "automations/a/disable", token: admin).json["state"] == "disabled")
            #expect(try await home.call("DELETE", "automations/a", token: admin).status == 204)
        }
    }
}
