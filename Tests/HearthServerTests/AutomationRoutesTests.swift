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

    /// `POST /automations/reload` answers with what the reload did, each problem with file, line and key.
    @Test func reload_returnsWhatWasLoadedRefusedAndPending() async throws {
        let made = MadeAutomations()
        try await TestHome.with(automations: { try made.make($0) }) { home in
            let (scenes, engine) = try #require(made.pair.withLock { $0 })
            await engine.setConfigReloader {
                let list = try? JSONDecoder().decode(Value.self, from: Data(made.text.withLock { $0 }.utf8))
                let lines = ["automations[0]": 3, "automations[1]": 9, "automations[1].starters[0].event.device": 11, "automations[2]": 15]
                return await ConfigReload.apply(scenes: nil, automations: list, file: "etc/hearth.yaml", lines: lines, book: scenes, engine: engine)
            }
            let admin = try home.adminToken()
            let member = try home.memberToken()
            let good = #"{"id":"now","name":"Now","starters":[{"manual":{}}],"actions":[{"command":{"device":"test:lamp","trait":"OnOff","command":"On"}}]}"#
            let broken = #"{"id":"broken","name":"Broken","starters":[{"event":{"device":"test:lamb","trait":"OnOff","event":"StateChange"}}],"actions":[{"command":{"device":"test:lamp","trait":"OnOff","command":"Onn"}}]}"#
            let late = #"{"id":"late","name":"Late","starters":[{"manual":{}}],"actions":[{"command":{"device":"late:relay","trait":"OnOff","command":"On"}}]}"#
            #expect(try await home.call("POST", "automations/reload", token: member).status == 403)

            // One broken entry (a misspelt device next to a real one): nothing changes, the problem is named.
            made.text.withLock { $0 = "[\(good),\(broken),\(late)]" }
            let refused = try await home.call("POST", "automations/reload", token: admin)
            #expect(refused.status == 200, "\(refused.text)")
            #expect(refused.json["applied"] == false)
            let problem = try #require(
                refused.json["refused"]?.listValue?.first { $0["key"] == "automations[1].starters[0].event.device" }, "\(refused.text)")
            #expect(problem["file"] == "etc/hearth.yaml")
            #expect(problem["line"] == 11)
            #expect(problem["key"] == "automations[1].starters[0].event.device")
            #expect(problem["message"]?.stringValue?.hasPrefix("no device 'test:lamb'") == true, "\(problem)")
            #expect(try await home.call("GET", "automations/now", token: admin).status == 404, "a refused reload loads nothing")

            // A good set: loaded, with the one that waits for a device said as pending.
            made.text.withLock { $0 = "[\(good),\(late)]" }
            let applied = try await home.call("POST", "automations/reload", token: admin)
            #expect(applied.json["applied"] == true, "\(applied.text)")
            #expect(applied.json["automations"] == 1)
            #expect(applied.json["refused"]?.listValue?.isEmpty == true)
            let pending = try #require(applied.json["pending"]?.listValue?.first, "\(applied.text)")
            #expect(pending["line"] == 9)
            #expect(pending["message"]?.stringValue?.contains("waits for 'late:relay'") == true, "\(pending)")
            #expect(try await home.call("GET", "automations/now", token: member).json["source"] == "config")
        }
    }
}

/// The scene book and engine a test home was made with (for calls the API does not offer), and
/// a text a test's reloader reads.
final class MadeAutomations: Sendable {
    let pair = Mutex<(SceneBook, AutomationEngine)?>(nil)
    let text = Mutex<String>("[]")

    func make(_ core: HomeCore) throws -> (SceneBook, AutomationEngine) {
        let made = try AutomationRoutesTests.make(core)
        pair.withLock { $0 = made }
        return made
    }
}
