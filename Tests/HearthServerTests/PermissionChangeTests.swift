import Foundation
import HearthAPI
import HearthClient
import HearthServer
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// `presentPermissionsUpdate` end to end: an app with a grant asks for another scope, an admin
/// approves or denies (HTTP, the Swift client, the `hearth` CLI), the grant changes in one
/// transaction, the app's call returns the new scope or the denial, and its live subscriptions
/// follow on the same socket.
@Suite(.timeLimit(.minutes(1))) struct PermissionChangeTests {
    static let lights = GrantScope(deviceTypes: [OnOffLightDeviceType.identifier], includeSensitive: false)

    static func decode<T: Decodable>(_ type: T.Type, _ reply: TestHome.Reply) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: reply.data)
    }

    /// The routes in process, over the real access store (SQLite): who may ask, see and decide.
    @Test func routes_appAsks_adminApproves_theGrantChanges() async throws {
        try await TestHome.inProcess { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            let grant = try home.appToken(scope: Self.lights)
            let other = try home.appToken("Wall Panel", scope: Self.lights)

            let asked = try await home.call("POST", "apps/permissions", token: grant.token, body: #"{"deviceTypes":["ContactSensor"]}"#)
            #expect(asked.status == 201, "\(asked.text)")
            let change = try Self.decode(WireGrantChange.self, asked)
            #expect(change.grantID == grant.id && change.status == .pending && change.appName == "Dashboard")
            #expect(change.requestedDeviceTypes == [ContactSensorDeviceType.identifier])

            #expect(try await home.call("POST", "apps/permissions", token: member, body: "{}").status == 403, "people have no grant to change")
            #expect(try await home.call("POST", "apps/permissions", token: grant.token, body: #"{"deviceTypes":["Toaster"]}"#).status >= 400)
            #expect(try await home.call("POST", "apps/permissions", token: grant.token, body: #"{"scope":"all"}"#).status == 400)
            #expect(try await home.call("GET", "apps/permissions/\(change.id)", token: other.token).status == 404, "another app's change")
            #expect(try await home.call("GET", "apps/permissions/\(change.id)", token: grant.token).status == 202, "still pending")

            let pending = try Self.decode([WireGrantChange].self, try await home.call("GET", "grants/changes?status=pending", token: admin))
            #expect(pending.map(\.id) == [change.id])
            #expect(try await home.call("GET", "grants/changes", token: member).status == 403)
            #expect(try await home.call("POST", "grants/changes/\(change.id)/approve", token: member, body: "{}").status == 403)
            #expect(try await home.call("POST", "grants/changes/\(change.id)/approve", token: grant.token, body: "{}").status == 403, "an app cannot approve itself")

            let approved = try await home.call("POST", "grants/changes/\(change.id)/approve", token: admin, body: "{}")
            #expect(approved.status == 200, "\(approved.text)")
            #expect(try Self.decode(WireGrantChange.self, approved).scope?.deviceTypes == [ContactSensorDeviceType.identifier])
            #expect(try await home.call("POST", "grants/changes/\(change.id)/approve", token: admin, body: "{}").status == 409, "decided once")

            let outcome = try await home.call("GET", "apps/permissions/\(change.id)", token: grant.token)
            #expect(outcome.status == 200)
            #expect(try Self.decode(WireGrantChange.self, outcome).status == .approved)
            let grants = try Self.decode([WireGrant].self, try await home.call("GET", "grants", token: admin))
            #expect(grants.first { $0.id == grant.id }?.scope.deviceTypes == [ContactSensorDeviceType.identifier])
            #expect(grants.first { $0.id == other.id }?.scope.deviceTypes == [OnOffLightDeviceType.identifier], "the other app is untouched")
            let devices = try Self.decode([WireDevice].self, try await home.call("GET", "devices", token: grant.token))
            #expect(devices.map(\.id) == [TestHome.contact])

            // A denial leaves the grant as it is; the app reads it as denied.
            let again = try Self.decode(WireGrantChange.self, try await home.call("POST", "apps/permissions", token: grant.token, body: "{}"))
            let denied = try await home.call("POST", "grants/changes/\(again.id)/deny", token: admin)
            #expect(try Self.decode(WireGrantChange.self, denied).status == .denied)
            #expect(try Self.decode(WireGrantChange.self, try await home.call("GET", "apps/permissions/\(again.id)", token: grant.token)).status == .denied)
            #expect(try Self.decode([WireDevice].self, try await home.call("GET", "devices", token: grant.token)).map(\.id) == [TestHome.contact])

            // An admin may choose otherwise than asked.
            let third = try Self.decode(
                WireGrantChange.self, try await home.call("POST", "apps/permissions", token: grant.token, body: #"{"deviceTypes":[]}"#))
            let chosen = try await home.call(
                "POST", "grants/changes/\(third.id)/approve", token: admin, body: #"{"deviceTypes":["OnOffLight"],"canControl":false}"#)
            let scope = try #require(try Self.decode(WireGrantChange.self, chosen).scope)
            #expect(scope.deviceTypes == [OnOffLightDeviceType.identifier] && !scope.canControl)
        }
    }

    /// Over a real port with `HearthClient`: the call returns the approved scope, the app's
    /// socket hears `grantUpdated`, its set follows (the lamp leaves, the door arrives) without
    /// reconnecting, and its `device(id:)` subscription on the lamp ends with `permissionDenied`
    /// while the session lives on. Then the CLI lists, denies and approves the next changes.
    @Test func client_presentPermissionsUpdate_andTheCLI_liveSubscriptionsFollow() async throws {
        try await TestHome.with { server in
            let admin = try server.adminToken()
            let grant = try server.appToken(scope: Self.lights)
            let app = HearthClient.Home(connection: HearthConnection(baseURL: server.baseURL, token: grant.token))
            let adminHome = HearthClient.Home(connection: HearthConnection(baseURL: server.baseURL, token: admin))

            var batched = app.devices().batched().makeAsyncIterator()
            let lampUpdates = app.device(id: TestHome.lamp)
            var lamp = lampUpdates.makeAsyncIterator()
            #expect(await batched.next()?.map(\.id) == [TestHome.lamp])
            #expect(await lamp.next()?.id == TestHome.lamp)

            let (pending, pendingContinuation) = AsyncStream<HearthClient.Home.PendingPermissionsUpdate>.makeStream()
            async let asked = app.presentPermissionsUpdate(deviceTypes: [ContactSensorDeviceType.identifier]) { pendingContinuation.yield($0) }
            var changes = pending.makeAsyncIterator()
            let change = try #require(await changes.next())
            #expect(try await adminHome.grantChanges(pendingOnly: true).map(\.id) == [change.changeID])
            _ = try await adminHome.approveChange(change.changeID)
            let scope = try await asked
            #expect(scope.deviceTypes == [ContactSensorDeviceType.identifier])

            #expect(await batched.next()?.map(\.id) == [TestHome.contact], "the lamp left the grant, the door came in")
            #expect(await lamp.next() == nil, "the lamp's subscription ends")
            #expect(lampUpdates.failure?.code == .permissionDenied, "\(String(describing: lampUpdates.failure))")
            #expect(app.revocation == nil, "only that subscription lost access; the session lives on")
            #expect(server.server.openWebSocketCount == 1, "the same socket carries on")
            var waited = 0
            while app.grantedScope == nil, waited < 200 {
                try await Task.sleep(for: .milliseconds(10))
                waited += 1
            }
            #expect(app.grantedScope?.deviceTypes == [ContactSensorDeviceType.identifier], "the socket's grantUpdated was decoded")

            // The CLI: list, deny, then approve a wider scope.
            let cli = try CLI(home: server)
            try cli.signIn(home: server, token: admin)
            let (more, moreContinuation) = AsyncStream<HearthClient.Home.PendingPermissionsUpdate>.makeStream()
            var morePending = more.makeAsyncIterator()
            async let refused = app.presentPermissionsUpdate(deviceTypes: [DoorLockDeviceType.identifier]) { moreContinuation.yield($0) }
            let denied = try #require(await morePending.next())
            let listed = try await cli.run(["grants", "changes"])
            #expect(listed.status == 0 && listed.output.contains(denied.changeID) && listed.output.contains("Door Lock"), "\(listed.output)")
            let deny = try await cli.run(["grants", "deny", denied.changeID])
            #expect(deny.status == 0, "\(deny.output)")
            do {
                _ = try await refused
                Issue.record("a denied change returned a scope")
            } catch {
                #expect((error as? HomeError)?.code == .permissionDenied, "\(error)")
            }
            #expect(try await app.me().scope?.deviceTypes == [ContactSensorDeviceType.identifier], "a denial changes nothing")

            async let widened = app.presentPermissionsUpdate(deviceTypes: [OnOffLightDeviceType.identifier, ContactSensorDeviceType.identifier]) {
                moreContinuation.yield($0)
            }
            let wider = try #require(await morePending.next())
            let approve = try await cli.run(["grants", "approve", wider.changeID])
            #expect(approve.status == 0, "\(approve.output)")
            let widenedScope = try await widened
            #expect(Set(widenedScope.deviceTypes ?? []) == [OnOffLightDeviceType.identifier, ContactSensorDeviceType.identifier])
            #expect(await batched.next()?.map(\.id) == [TestHome.contact, TestHome.lamp], "the newly granted lamp appears")
            let all = try await cli.run(["grants", "changes", "--all", "--json"])
            #expect(all.output.contains("\"denied\"") && all.output.contains("\"approved\""), "\(all.output)")
        }
    }

    /// The socket-wide message round-trips through the typed enum.
    @Test func grantUpdated_roundTrips() throws {
        let message = WSServerMessage.grantUpdated(WireScope(deviceTypes: [OnOffLightDeviceType.identifier], includeSensitive: false, canControl: true))
        let data = try JSONEncoder().encode(message)
        #expect(try JSONDecoder().decode(WSServerMessage.self, from: data) == message)
        #expect(message.id == nil && message.kind == .grantUpdated)
    }
}
