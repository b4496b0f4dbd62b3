import Foundation
import HearthAPI
import HearthClient
import HearthServer
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// An admin edits a live grant (HTTP and the `hearth` CLI): the app's open subscriptions follow
/// at once over the same socket — devices leaving the scope vanish from `batched()`, `stream()`
/// gets a fresh snapshot, a `device(id:)` subscription to a device now hidden ends — and its
/// next calls see the new scope.
@Suite(.timeLimit(.minutes(1))) struct GrantEditTests {
    @Test func editingAGrant_liveSubscriptionsFollow_withoutReconnecting() async throws {
        try await TestHome.with { server in
            let admin = try server.adminToken()
            let grant = try server.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: false))
            let app = HearthClient.Home(connection: HearthConnection(baseURL: server.baseURL, token: grant.token))

            var batched = app.devices().batched().makeAsyncIterator()
            var stream = app.devices().stream().makeAsyncIterator()
            let doorUpdates = app.device(id: TestHome.contact)
            var door = doorUpdates.makeAsyncIterator()
            #expect(await batched.next()?.map(\.id) == [TestHome.contact, TestHome.lamp])
            guard case .snapshot(let first, _) = await stream.next() else { Issue.record("no snapshot"); return }
            #expect(first.map(\.id) == [TestHome.contact, TestHome.lamp])
            #expect(await door.next()?.id == TestHome.contact)
            #expect(server.server.openWebSocketCount == 1)

            let edited = try await server.call("PATCH", "grants/\(grant.id)", token: admin, body: #"{"deviceTypes":["OnOffLight"]}"#)
            #expect(edited.status == 200, "\(edited.text)")

            #expect(await batched.next()?.map(\.id) == [TestHome.lamp], "the door left the scope: gone from the set at once")
            guard case .snapshot(let after, _) = await stream.next() else { Issue.record("no fresh snapshot"); return }
            #expect(after.map(\.id) == [TestHome.lamp])
            #expect(await door.next() == nil, "the hidden door's subscription ends")
            #expect(doorUpdates.failure?.code == .permissionDenied, "the grant no longer covers the door")
            #expect(app.revocation == nil, "only that subscription lost access; the session lives on")
            #expect(server.server.openWebSocketCount == 1, "the same socket carries on")

            #expect(try await app.devices().list().map(\.id) == [TestHome.lamp])
            let command = try await server.call(
                "POST", "commands", token: grant.token, body: #"{"device":"test:door","type":"ContactSensor","trait":"BooleanState","command":"0x0000"}"#)
            #expect(command.status == 404, "\(command.text)")
            #expect(try await app.me().scope?.deviceTypes == [OnOffLightDeviceType.identifier])
        }
    }

    @Test func cli_editsAGrant_andTheAppSeesItAtOnce() async throws {
        try await TestHome.with { server in
            let cli = try CLI(home: server)
            try cli.signIn(home: server, token: try server.adminToken())
            let grant = try server.appToken(scope: GrantScope(deviceTypes: [OnOffLightDeviceType.identifier], includeSensitive: false))
            let app = HearthClient.Home(connection: HearthConnection(baseURL: server.baseURL, token: grant.token))
            var batched = app.devices().batched().makeAsyncIterator()
            #expect(await batched.next()?.map(\.id) == [TestHome.lamp])

            let edit = try await cli.run(
                ["grants", "edit", grant.id, "--device-type", "ContactSensor", "--device-type", "DoorLock", "--sensitive-device", "test:lock"])
            #expect(edit.status == 0, "\(edit.output)")
            #expect(await batched.next()?.map(\.id) == [TestHome.contact, TestHome.lock])
            let listed = try await cli.run(["grants", "--json"])
            #expect(listed.output.contains("test:lock"), "\(listed.output)")
        }
    }
}
