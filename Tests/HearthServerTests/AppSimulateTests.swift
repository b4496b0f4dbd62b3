import DriverAPI
import Foundation
import HashTreeCollections
import HearthServer
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Synchronization
import Testing

/// An app simulates its own automations within its grant (`POST /automations/{id}/simulate`)
/// over a real server; any other app, another's automation or a narrowed grant is refused.
@Suite struct AppSimulateTests {
    @Test(.timeLimit(.minutes(1))) func anAppSimulatesItsOwn_withinItsGrant_andNothingElse() async throws {
        let made = MadeAutomations()
        try await TestHome.with(automations: { try made.make($0) }) { home in
            let engine = try #require(made.pair.withLock { $0 }).1
            let access = home.access
            await engine.setGrantLookup { grant in (try? access.grants(includeRevoked: false))?.first { $0.id == grant }?.scope }
            let admin = try home.adminToken()
            let lampType = try #require(home.core.state.devices[TestHome.lamp]?.types.first?.id)
            let scope = GrantScope(
                deviceTypes: nil, includeSensitive: false, canControl: true,
                automationTypes: [AutomationType(deviceType: lampType, trait: OnOffTrait.identifier)])
            let app = try home.appToken("Automator", scope: scope)
            let other = try home.appToken("Other", scope: scope)
            let plain = try home.appToken("Viewer", scope: GrantScope(deviceTypes: nil, includeSensitive: false))
            let mine = #"{"id":"app-lamp","name":"App lamp","starters":[{"manual":{}}],"actions":[{"command":{"device":"test:lamp","trait":"OnOff","command":"On"}}]}"#
            #expect(try await home.call("POST", "automations", token: app.token, body: mine).status == 201)
            #expect(try await home.call("POST", "automations", token: admin, body: AutomationRunsSocketTests.manual("home-one")).status == 201)

            // Its own: the trace with what it would send, and nothing sent.
            let sim = try await home.call("POST", "automations/app-lamp/simulate", token: app.token, body: "{}")
            #expect(sim.status == 200, "\(sim.text)")
            #expect(sim.json["outcome"] == "simulated", "\(sim.text)")
            #expect(sim.json["steps"]?.listValue?.first?["result"] == "wouldSend", "\(sim.text)")
            #expect(home.driver.seen.withLock { $0.isEmpty }, "simulate sends nothing")

            // Not the home's, not another app's; not without automation types.
            #expect(try await home.call("POST", "automations/home-one/simulate", token: app.token, body: "{}").status == 404)
            #expect(try await home.call("POST", "automations/app-lamp/simulate", token: other.token, body: "{}").status == 404)
            #expect(try await home.call("POST", "automations/app-lamp/simulate", token: plain.token, body: "{}").status == 404)

            // The grant narrowed (OnOff is no longer an automation type): refused with the issue.
            try access.updateGrant(id: app.id, scope: GrantScope(deviceTypes: nil, includeSensitive: false, canControl: true, automationTypes: [
                AutomationType(deviceType: lampType, trait: IdentifyTrait.identifier)
            ]))
            let narrowed = try await home.call("POST", "automations/app-lamp/simulate", token: app.token, body: "{}")
            #expect(narrowed.status == 403, "\(narrowed.text)")
            #expect(narrowed.json["error"]?["issues"]?.listValue?.first?["code"] == "outOfScope", "\(narrowed.text)")
            #expect(home.driver.seen.withLock { $0.isEmpty })
        }
    }
}
