import Foundation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// App grants scope what an app sees: scoped-out devices are invisible (lists, lookups,
/// subscriptions, commands), not merely unwritable.
@Suite struct ScopedGrantTests {
    @Test func lightsOnlyGrant_hidesOtherDevices_inListsLookupsAndCommands() async throws {
        try await TestHome.inProcess { home in
            let app = try home.appToken(scope: GrantScope(deviceTypes: [OnOffLightDeviceType.identifier], includeSensitive: false)).token

            let list = try await home.call("GET", "devices", token: app)
            #expect(list.json.listValue?.compactMap { $0["id"]?.stringValue } == ["test:lamp"])

            let door = try await home.call("GET", "devices/test:door", token: app)
            #expect(door.status == 404)
            #expect(door.errorCode == "notFound")

            let hiddenCommand = try await home.call(
                "POST", "commands", token: app,
                body: #"{"device":"test:door","type":"ContactSensor","trait":"BooleanState","command":"0"}"#)
            #expect(hiddenCommand.status == 404, "a scoped-out device is invisible, not just unwritable: \(hiddenCommand.text)")

            let lamp = try await home.call(
                "POST", "commands", token: app, body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"on"}"#)
            #expect(lamp.status == 200, "\(lamp.text)")
        }
    }

    @Test func sensitiveDevices_appearOnlyWhenTheGrantIncludesThem() async throws {
        try await TestHome.inProcess { home in
            let without = try home.appToken("Without", scope: GrantScope(deviceTypes: nil, includeSensitive: false)).token
            let with = try home.appToken("With", scope: GrantScope(deviceTypes: nil, includeSensitive: true)).token
            let a = try await home.call("GET", "devices", token: without).json.listValue?.compactMap { $0["id"]?.stringValue }
            let b = try await home.call("GET", "devices", token: with).json.listValue?.compactMap { $0["id"]?.stringValue }
            #expect(a == ["test:door", "test:lamp"])
            #expect(b == ["test:door", "test:lamp", "test:lock"])
            #expect(try await home.call("GET", "devices/test:lock", token: without).status == 404)
        }
    }

    @Test func readOnlyGrant_refusesCommands() async throws {
        try await TestHome.inProcess { home in
            let app = try home.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: false, canControl: false)).token
            let r = try await home.call(
                "POST", "commands", token: app, body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"on"}"#)
            #expect(r.status == 403)
            #expect(r.errorCode == "permissionDenied")
        }
    }

    @Test func scopedSubscription_snapshotHoldsOnlyAllowedDevices() async throws {
        try await TestHome.with { home in
            let app = try home.appToken(scope: GrantScope(deviceTypes: [ContactSensorDeviceType.identifier], includeSensitive: false)).token
            try await SocketProbe.with(home, token: app) { socket in
                try await socket.send(#"{"type":"subscribe","id":"all","query":"devices","mode":"batched"}"#)
                let snapshot = try await socket.next("snapshot")
                #expect(snapshot?["id"] == "all")
                #expect(snapshot?["devices"]?.listValue?.compactMap { $0["id"]?.stringValue } == ["test:door"])
                try await socket.send(#"{"type":"subscribe","id":"lamp","query":"device","device":"test:lamp"}"#)
                let refused = try await socket.next("error")
                #expect(refused?["id"] == "lamp")
                #expect(refused?["error"]?["code"] == "notFound")
            }
        }
    }
}
