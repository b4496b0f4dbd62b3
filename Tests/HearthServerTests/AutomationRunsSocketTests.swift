import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthAPI
import HearthClient
import HearthServer
import HomeAutomation
import HomeCore
import HomeModel
import Synchronization
import Testing

/// The WebSocket `automationRuns` subscription over a real server: every trace update of one
/// automation or of all, with the reading rules of `GET /automations/ID/runs`.
@Suite struct AutomationRunsSocketTests {
    static func manual(_ id: String) -> String {
        #"{"id":"\#(id)","name":"Manual \#(id.replacingOccurrences(of: "-", with: " "))","starters":[{"manual":{}}],"actions":[{"command":{"device":"test:lamp","trait":"OnOff","command":"On"}}]}"#
    }

    /// The next `run` message whose trace is finished (not `running`), and every run message before it.
    static func untilFinished(_ probe: inout SocketProbe) async throws -> [Value] {
        var seen: [Value] = []
        while let m = try await probe.next("run", "end", "error") {
            seen.append(m)
            guard m["type"] == "run" else { return seen }
            if m["run"]?["outcome"] != "running" { return seen }
        }
        return seen
    }

    @Test(.timeLimit(.minutes(1))) func membersSeeRunsLive_oneAutomationOrAll_appsSeeNone() async throws {
        try await TestHome.with(automations: AutomationRoutesTests.make) { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            let app = try home.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: true))
            #expect(try await home.call("POST", "automations", token: admin, body: Self.manual("a")).status == 201)
            #expect(try await home.call("POST", "automations", token: admin, body: Self.manual("b")).status == 201)

            // An app reads no automation: one of them is notFound, as over HTTP.
            try await SocketProbe.with(home, token: app.token) { probe in
                try await probe.send(#"{"type":"subscribe","id":"r","query":"automationRuns","automation":"a"}"#)
                let refused = try await probe.next("subscribed", "error")
                #expect(refused?["type"] == "error", "\(String(describing: refused))")
                #expect(refused?["error"]?["code"] == "notFound")
            }

            try await SocketProbe.with(home, token: member) { probe in
                try await probe.send(#"{"type":"subscribe","id":"ra","query":"automationRuns","automation":"a"}"#)
                #expect(try await probe.next("subscribed", "error")?["id"] == "ra")
                try await probe.send(#"{"type":"subscribe","id":"all","query":"automationRuns"}"#)
                #expect(try await probe.next("subscribed", "error")?["id"] == "all")

                // b runs, then a: `ra` must see a's run and never b's (b's came first, so it would be seen first).
                let runB = try await home.call("POST", "automations/b/run", token: member)
                #expect(runB.status == 202, "\(runB.text)")
                let runA = try await home.call("POST", "automations/a/run", token: member)
                #expect(runA.status == 202, "\(runA.text)")
                let aID = try #require(runA.json["run"]?.stringValue)
                let bID = try #require(runB.json["run"]?.stringValue)
                var ra: [Value] = []
                var all: [Value] = []
                while !(ra.contains { $0["run"]?["id"]?.stringValue == aID && $0["run"]?["outcome"] == "completed" })
                    || !(all.filter { $0["run"]?["outcome"] == "completed" }.count >= 2)
                {
                    guard let m = try await probe.next("run", "end", "error") else { break }
                    #expect(m["type"] == "run", "\(m)")
                    if m["id"] == "ra" { ra.append(m) } else { all.append(m) }
                }
                #expect(ra.allSatisfy { $0["run"]?["automation"] == "a" }, "ra only carries a: \(ra)")
                #expect(ra.first?["run"]?["outcome"] == "running", "the start comes first: \(ra)")
                #expect(ra.last?["run"]?["steps"]?.listValue?.isEmpty == false, "the finished trace has its steps")
                #expect(ra.allSatisfy { $0["missed"] == 0 })
                let allRuns = Set(all.compactMap { $0["run"]?["id"]?.stringValue })
                #expect(allRuns == [aID, bID], "all carries both runs: \(all)")

                // What the socket said is what the API keeps.
                let kept = try await home.call("GET", "runs/\(aID)", token: member)
                #expect(kept.json["outcome"] == ra.last?["run"]?["outcome"])

                // Deleting a ends its subscription; `all` lives on.
                #expect(try await home.call("DELETE", "automations/a", token: admin).status == 204)
                let end = try await probe.next("end")
                #expect(end?["id"] == "ra")
                #expect(end?["reason"] == "ended")
                _ = try await home.call("POST", "automations/b/run", token: member)
                let more = try await Self.untilFinished(&probe)
                #expect(more.last?["id"] == "all" && more.last?["run"]?["automation"] == "b", "\(more)")
            }
        }
    }

    /// `POST /automations/ID/run` → the run's ID.
    static func run(_ id: String, at base: URL, token: String) async throws -> String? {
        var request = URLRequest(url: base.appendingPathComponent("api/v1/automations/\(id)/run"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession(configuration: .ephemeral).data(for: request)
        return (try? JSONDecoder().decode(Value.self, from: data))?["run"]?.stringValue
    }

    @Test(.timeLimit(.minutes(1))) func theSwiftClient_getsRunsOverItsSharedSocket() async throws {
        try await TestHome.with(automations: AutomationRoutesTests.make) { home in
            let admin = try home.adminToken()
            #expect(try await home.call("POST", "automations", token: admin, body: Self.manual("b")).status == 201)
            let client = HearthClient.Home(connection: HearthConnection(baseURL: home.baseURL, token: admin))
            let events = client.events()
            var runs = client.automationRuns(of: "b").makeAsyncIterator()
            // Runs are started until the subscription (asynchronous) sees one; every one started is kept.
            let base = home.baseURL
            // Stopped by a flag, not by cancelling the task: cancelling a URLSession request in
            // flight can deadlock on Linux (URLSessionTask.cancel waits for the session's queue
            // while holding the task's status lock), and would hold a pool thread for good.
            let stop = Atomic<Bool>(false)
            let runner = Task {
                var ids: [String] = []
                for _ in 0..<100 {
                    if stop.load(ordering: .acquiring) { break }
                    if let id = try? await Self.run("b", at: base, token: admin) { ids.append(id) }
                    try? await Task.sleep(for: .milliseconds(50))
                }
                return ids
            }
            // The first run seen from its start (one already going when the subscription opened is skipped).
            var started: Set<String> = []
            var finished: WireRunUpdate?
            while let u = await runs.next() {
                guard let id = u.id else { continue }
                if u.outcome == "running" {
                    started.insert(id)
                } else if started.contains(id) {
                    finished = u
                    break
                }
            }
            stop.store(true, ordering: .releasing)
            let ids = await runner.value
            #expect(ids.contains(try #require(finished?.id)))
            #expect(finished?.automation == "b")
            #expect(finished?.outcome == "completed")
            #expect(home.server.openWebSocketCount == 1, "runs share the socket with the events subscription")
            withExtendedLifetime(events) {}
        }
    }
}
