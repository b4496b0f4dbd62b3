import DriverAPI
import Foundation
import HearthAPI
import HearthClient
import HearthServer
import HomeAutomation
import HomeCore
import HashTreeCollections
import HomeModel
import HomeStorage
import Synchronization
import Testing

/// Authoring automations from outside: `/candidates` per device and principal, and the Swift
/// client's builder saving through the real server (refusals carry every issue).
@Suite struct AutomationAuthoringTests {
    @Test func candidates_followTheCatalogue_andAnAppsAutomationTypes() async throws {
        try await TestHome.with(automations: AutomationRoutesTests.make) { home in
            let admin = try home.adminToken()
            let lamp = try await home.call("GET", "candidates?device=test:lamp", token: admin)
            #expect(lamp.status == 200, "\(lamp.text)")
            func has(_ list: String, _ kind: String, _ trait: String, _ name: String, in r: TestHome.Reply) -> Bool {
                r.json[list]?.listValue?.contains { $0["kind"]?.stringValue == kind && $0["trait"]?.stringValue == trait && $0["name"]?.stringValue == name } == true
            }
            #expect(has("starters", "attribute", "OnOff", "OnOff", in: lamp), "\(lamp.text)")
            #expect(has("conditions", "attribute", "OnOff", "OnOff", in: lamp))
            #expect(has("actions", "command", "OnOff", "On", in: lamp))
            #expect(has("actions", "command", "OnOff", "Toggle", in: lamp))
            #expect(lamp.json["starters"]?.listValue?.contains { $0["kind"] == "connectivity" } == true)
            #expect(!has("starters", "attribute", "BooleanState", "StateValue", in: lamp), "only the device's own traits")
            let door = try await home.call("GET", "candidates?device=test:door", token: admin)
            #expect(has("starters", "attribute", "BooleanState", "StateValue", in: door))
            #expect(try await home.call("GET", "candidates?device=test:nothing", token: admin).status == 404)
            #expect(try await home.call("GET", "candidates", token: admin).status == 400)

            // An app: only the pairs it may automate, actions only when it may control.
            let lampType = try #require(home.core.state.devices[TestHome.lamp]?.types.first?.id)
            let doorType = try #require(home.core.state.devices[TestHome.contact]?.types.first?.id)
            let scoped = try home.appToken(
                "Automator",
                scope: GrantScope(
                    deviceTypes: nil, includeSensitive: false, canControl: true,
                    automationTypes: [AutomationType(deviceType: lampType, trait: OnOffTrait.identifier)]))
            let appLamp = try await home.call("GET", "candidates?device=test:lamp", token: scoped.token)
            #expect(has("actions", "command", "OnOff", "On", in: appLamp), "\(appLamp.text)")
            #expect(!has("starters", "attribute", "Identify", "IdentifyTime", in: appLamp), "Identify is not an automation type of this app")
            let appDoor = try await home.call("GET", "candidates?device=test:door", token: scoped.token)
            #expect(appDoor.json["starters"]?.listValue?.allSatisfy { $0["kind"] == "connectivity" } == true, "\(appDoor.text)")
            let watcher = try home.appToken(
                "Watcher",
                scope: GrantScope(
                    deviceTypes: nil, includeSensitive: false, canControl: false,
                    automationTypes: [AutomationType(deviceType: doorType, trait: BooleanStateTrait.identifier),
                                      AutomationType(deviceType: lampType, trait: OnOffTrait.identifier)]))
            let watched = try await home.call("GET", "candidates?device=test:lamp", token: watcher.token)
            #expect(has("starters", "attribute", "OnOff", "OnOff", in: watched))
            #expect(watched.json["actions"]?.listValue?.isEmpty == true, "no control, no actions: \(watched.text)")
            // A sensitive device the grant does not show is not found, as if absent.
            #expect(try await home.call("GET", "candidates?device=test:lock", token: scoped.token).status == 404)
        }
    }

    @Test func theSwiftBuilder_validatesAndSaves_andARefusalCarriesEveryIssue() async throws {
        try await TestHome.with(automations: AutomationRoutesTests.make) { home in
            let admin = try home.adminToken()
            let client = HearthClient.Home(connection: HearthConnection(baseURL: home.baseURL, token: admin))
            let draft = AutomationDraft(id: "door-light", name: "Door light", mode: .restart) {
                AutomationStarter.attribute(device: "test:door", trait: "BooleanState", attribute: "StateValue", to: false, id: "opened")
                AutomationStarter.manual()
            } conditions: {
                AutomationCondition.any {
                    AutomationCondition.starter("opened")
                    AutomationCondition.time(after: "18:00", before: "06:00")
                }
            } actions: {
                AutomationAction.command(device: "test:lamp", type: "OnOffLight", trait: "OnOff", command: "On")
                AutomationAction.delay(.seconds(300))
                AutomationAction.command(device: "test:lamp", trait: "OnOff", command: "Off")
            }
            #expect(try await client.validateAutomation(draft).filter { $0.severity == .error }.isEmpty)
            let saved = try await client.createAutomation(draft)
            #expect(saved.revision == 1)
            #expect(saved.automation["mode"] == "restart")
            #expect(saved.automation["actions"]?.listValue?[1]["delay"] != nil, "\(saved.automation)")
            // The server reads back what the builder wrote.
            let stored = try await home.call("GET", "automations/door-light", token: admin)
            #expect(stored.json["automation"]?["starters"]?.listValue?.first?["id"] == "opened", "\(stored.text)")
            #expect(stored.json["automation"]?["conditions"]?["any"]?.listValue?.count == 2)

            let broken = AutomationDraft(id: "broken", name: "Broken") {
                AutomationStarter.event(device: "test:dor", trait: "Switch", event: "InitialPress")
            } actions: {
                AutomationAction.command(device: "test:lamp", trait: "OnOff", command: "Onn")
            }
            let issues = try await client.validateAutomation(broken)
            #expect(Set(issues.map(\.code)).isSuperset(of: ["unknownDevice", "unknownCommand"]), "\(issues)")
            do {
                try await client.createAutomation(broken)
                Issue.record("a broken automation was saved")
            } catch let refused as AutomationRefused {
                #expect(refused.error.code == .invalidArgument)
                #expect(refused.issues.map(\.code) == issues.map(\.code), "the same issues as validate: \(refused)")
                #expect(refused.issues.first?.suggestion?.contains("test:door") == true)
            }
        }
    }
}

/// Automations an app makes under its grant (design §6.6): only devices it sees and (device
/// type, trait) pairs it may automate; its own only; re-checked at every run; revoking the
/// grant suspends them.
@Suite struct AppAutomationTests {
    @Test(.timeLimit(.minutes(1))) func anAppAutomatesWithinItsGrant_andLosesItWithTheGrant() async throws {
        let made = MadeAutomations()
        try await TestHome.with(automations: { try made.make($0) }) { home in
            let engine = try #require(made.pair.withLock { $0 }).1
            let access = home.access
            await engine.setGrantLookup { grant in (try? access.grants(includeRevoked: false))?.first { $0.id == grant }?.scope }
            let admin = try home.adminToken()
            let lampType = try #require(home.core.state.devices[TestHome.lamp]?.types.first?.id)
            let pairs: Set<AutomationType> = [AutomationType(deviceType: lampType, trait: OnOffTrait.identifier)]
            let scope = GrantScope(deviceTypes: nil, includeSensitive: false, canControl: true, automationTypes: pairs)
            let app = try home.appToken("Automator", scope: scope)
            let plain = try home.appToken("Viewer", scope: GrantScope(deviceTypes: nil, includeSensitive: false))
            let mine = #"{"id":"app-lamp","name":"App lamp","starters":[{"manual":{}}],"actions":[{"command":{"device":"test:lamp","trait":"OnOff","command":"On"}}]}"#
            let door = #"{"id":"app-door","name":"App door","starters":[{"attribute":{"device":"test:door","trait":"BooleanState","attribute":"StateValue","to":false}}],"actions":[{"command":{"device":"test:lamp","trait":"OnOff","command":"On"}},{"run":"home-one"}]}"#
            let homeOne = try await home.call("POST", "automations", token: admin, body: AutomationRunsSocketTests.manual("home-one"))
            #expect(homeOne.status == 201, "\(homeOne.text)")

            // Without automation types an app may not automate.
            #expect(try await home.call("POST", "automations", token: plain.token, body: mine).status == 403)
            // Outside its pairs: 403 with every outOfScope issue.
            let refused = try await home.call("POST", "automations", token: app.token, body: door)
            #expect(refused.status == 403, "\(refused.text)")
            let codes = refused.json["error"]?["issues"]?.listValue?.compactMap { $0["code"]?.stringValue } ?? []
            #expect(codes == ["outOfScope", "outOfScope"], "the door starter and the run action: \(refused.text)")
            // Inside: saved, owned by the grant.
            let saved = try await home.call("POST", "automations", token: app.token, body: mine)
            #expect(saved.status == 201, "\(saved.text)")
            #expect(saved.json["owner"]?.stringValue == "app:\(app.id)")
            // It sees only its own; the home's are not found.
            let listed = try await home.call("GET", "automations", token: app.token)
            #expect(listed.json.listValue?.compactMap { $0["automation"]?["id"]?.stringValue } == ["app-lamp"], "\(listed.text)")
            #expect(try await home.call("GET", "automations/home-one", token: app.token).status == 404)
            #expect(try await home.call("DELETE", "automations/home-one", token: app.token).status == 404)
            #expect(try await home.call("POST", "automations/home-one/run", token: app.token).status == 404)

            // It runs as the app.
            let run = try await home.call("POST", "automations/app-lamp/run", token: app.token)
            #expect(run.status == 202, "\(run.text)")
            let runID = try #require(run.json["run"]?.stringValue)
            var trace = try await home.call("GET", "runs/\(runID)", token: app.token)
            for _ in 0..<300 where trace.json["outcome"] == "running" {
                try await Task.sleep(for: .milliseconds(10))
                trace = try await home.call("GET", "runs/\(runID)", token: app.token)
            }
            #expect(trace.json["outcome"] == "completed", "\(trace.text)")
            #expect(home.driver.seen.withLock { $0.contains { $0.command == OnOffTrait.Command.on } })

            // The grant narrowed (OnOff no longer an automation type): the next run is refused, traced.
            try access.updateGrant(id: app.id, scope: GrantScope(deviceTypes: nil, includeSensitive: false, canControl: true, automationTypes: [
                AutomationType(deviceType: lampType, trait: IdentifyTrait.identifier)
            ]))
            let narrowed = try await home.call("POST", "automations/app-lamp/run", token: admin)
            let narrowedID = try #require(narrowed.json["run"]?.stringValue)
            let skipped = try await home.call("GET", "runs/\(narrowedID)", token: admin)
            #expect(skipped.json["outcome"] == "skipped", "\(skipped.text)")
            #expect(skipped.json["reason"]?.stringValue?.contains("outside the app's grant now") == true)

            // Revoked: suspended (grantRevoked).
            #expect(try await home.call("DELETE", "grants/\(app.id)", token: admin).status == 204)
            var state = try await home.call("GET", "automations/app-lamp", token: admin)
            for _ in 0..<300 where state.json["state"] != "suspended" {
                try await Task.sleep(for: .milliseconds(10))
                state = try await home.call("GET", "automations/app-lamp", token: admin)
            }
            #expect(state.json["state"] == "suspended", "\(state.text)")
            #expect(state.json["suspendedReason"] == "grantRevoked")
        }
    }
}

/// The consent request carries the automation types an app wants (GHA's
/// `referencedAutomationTypes`); the admin sees them and approves them with the grant.
@Suite struct AutomationConsentTests {
    @Test(.timeLimit(.minutes(1))) func anAppAsksToAutomate_theAdminApproves_andItsGrantSaysSo() async throws {
        try await TestHome.with(automations: AutomationRoutesTests.make) { home in
            let admin = try home.adminToken()
            // Names the catalogue does not know, or a trait the type lacks, are refused at once.
            let wrong = try await home.call(
                "POST", "apps/requests", body: #"{"name":"Bad","automationTypes":[{"deviceType":"OnOffLight","trait":"DoorLock"}]}"#)
            #expect(wrong.status == 400, "\(wrong.text)")

            let base = home.baseURL
            let adminClient = HearthClient.Home(connection: HearthConnection(baseURL: base, token: admin))
            let connected = Task { () throws -> HearthClient.Home in
                try await HearthClient.Home.connect(
                    url: base, appName: "Automator",
                    automationTypes: [WireAutomationType(deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier)],
                    maxWait: .seconds(30)
                ) { pending in
                    // The admin sees what the app wants to automate, and approves what it asked for.
                    let request = try? await adminClient.appRequests(pendingOnly: true).first { $0.id == pending.requestID }
                    let wants = request?.requestedAutomationTypes ?? []
                    #expect(wants == [WireAutomationType(deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier)], "\(wants)")
                    _ = try? await adminClient.approve(request: pending.requestID)
                }
            }
            let app = try await connected.value
            let grants = try await home.call("GET", "grants", token: admin)
            let scope = grants.json.listValue?.first { $0["appName"] == "Automator" }?["scope"]
            #expect(scope?["automationTypes"]?.listValue?.first?["trait"] == 6, "\(grants.text)")
            // With it, the app makes an automation of its own through the builder.
            let draft = AutomationDraft(id: "mine", name: "Mine") {
                AutomationStarter.manual()
            } actions: {
                AutomationAction.command(device: "test:lamp", trait: "OnOff", command: "Toggle")
            }
            let saved = try await app.createAutomation(draft)
            #expect(saved.owner?.hasPrefix("app:") == true)
            // Outside its pairs, the builder's error carries the outOfScope issue.
            let outside = AutomationDraft(id: "outside", name: "Outside") {
                AutomationStarter.attribute(device: "test:door", trait: "BooleanState", attribute: "StateValue", to: false)
            } actions: {
                AutomationAction.log("door")
            }
            do {
                try await app.createAutomation(outside)
                Issue.record("saved outside the grant")
            } catch let refused as AutomationRefused {
                #expect(refused.error.code == .permissionDenied)
                #expect(refused.issues.map(\.code) == ["outOfScope"], "\(refused)")
            }
        }
    }
}
