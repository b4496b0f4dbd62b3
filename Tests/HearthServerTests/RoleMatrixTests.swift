import Foundation
import HearthAPI
import HomeCore
import HomeModel
import Testing

/// Every layout and administration operation over real HTTP: refused for a member with
/// `permissionDenied` (and nothing changes), allowed for an admin.
@Suite struct RoleMatrixTests {
    struct Operation: Sendable, CustomTestStringConvertible {
        let name: String
        let method: String
        let path: String
        let body: String?
        var testDescription: String { name }
    }

    static let layoutAndAdminOperations: [Operation] = [
        Operation(name: "create structure", method: "POST", path: "structures", body: #"{"name":"Cabin"}"#),
        Operation(name: "rename structure", method: "PATCH", path: "structures/structure-home", body: #"{"name":"Our Home"}"#),
        Operation(name: "delete structure", method: "DELETE", path: "structures/structure-home", body: nil),
        Operation(name: "create room", method: "POST", path: "rooms", body: #"{"name":"Kitchen","structure":"structure-home"}"#),
        Operation(name: "rename room", method: "PATCH", path: "rooms/room-home-living-room", body: #"{"name":"Lounge"}"#),
        Operation(name: "delete room", method: "DELETE", path: "rooms/room-home-living-room", body: nil),
        Operation(name: "rename device", method: "PATCH", path: "devices/test:lamp", body: #"{"name":"Reading Lamp"}"#),
        Operation(name: "move device out of its room", method: "PATCH", path: "devices/test:lamp", body: #"{"room":null}"#),
        Operation(
            name: "commission device", method: "POST", path: "devices/test:new-plug/commission",
            body: #"{"name":"Desk Plug","structure":"structure-home","room":"room-home-living-room"}"#),
        Operation(name: "decommission device", method: "POST", path: "devices/test:door/decommission", body: nil),
        Operation(name: "add user", method: "POST", path: "users", body: #"{"username":"noah","password":"long enough","role":"member"}"#),
        Operation(name: "list app requests", method: "GET", path: "apps/requests", body: nil),
        Operation(name: "list grants", method: "GET", path: "grants", body: nil),
    ]

    @Test(arguments: layoutAndAdminOperations)
    func member_isRefused_andAdmin_isAllowed(_ op: Operation) async throws {
        try await TestHome.inProcess { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            let before = home.core.state.version

            let refused = try await home.call(op.method, op.path, token: member, body: op.body)
            #expect(refused.status == 403, "\(op.name) as member: \(refused.text)")
            #expect(refused.errorCode == "permissionDenied")
            #expect(home.core.state.version == before, "a refused \(op.name) must change nothing")

            let allowed = try await home.call(op.method, op.path, token: admin, body: op.body)
            #expect((200..<300).contains(allowed.status), "\(op.name) as admin: \(allowed.text)")
        }
    }

    @Test(.timeLimit(.minutes(1))) func member_reads_observes_andControls() async throws {
        try await TestHome.with { home in
            let member = try home.memberToken()
            let devices = try await home.call("GET", "devices", token: member)
            #expect(devices.status == 200)
            let ids = devices.json.listValue?.compactMap { $0["id"]?.stringValue } ?? []
            #expect(ids == ["test:door", "test:lamp", "test:lock"])
            #expect(try await home.call("GET", "rooms", token: member).status == 200)
            #expect(try await home.call("GET", "structures", token: member).status == 200)
            // Members see no discovered devices: commissioning is for admins.
            #expect(try await home.call("GET", "discovered", token: member).json == .list([]))

            let toggled = try await home.call(
                "POST", "commands", token: member, body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"toggle"}"#)
            #expect(toggled.status == 200, "\(toggled.text)")
            let lamp = try await home.call("GET", "devices/test:lamp", token: member)
            let onOff = lamp.json["types"]?.listValue?.first?["traits"]?.listValue?.first { $0["id"] == 6 }?["attributes"]?.listValue?.first
            #expect(onOff?["value"] == .bool(true))
            #expect(onOff?["name"] == "onOff")

            // Observes: a live subscription over the WebSocket sees the next toggle.
            try await SocketProbe.with(home, token: member) { socket in
                try await socket.send(#"{"type":"subscribe","id":"lamp","query":"device","device":"test:lamp"}"#)
                let first = try await socket.next("device", "error", "end")
                #expect(first?["type"] == "device", "\(String(describing: first))")
                let toggled = try await home.call(
                    "POST", "commands", token: member, body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"toggle"}"#)
                #expect(toggled.status == 200, "\(toggled.text)")
                let next = try await socket.next("device", "error", "end")
                let value = next?["device"]?["types"]?.listValue?.first?["traits"]?.listValue?.first { $0["id"] == 6 }?["attributes"]?.listValue?.first?["value"]
                #expect(value == .bool(false), "the member's subscription sees the lamp go off: \(String(describing: next))")
            }
        }
    }

    @Test func noToken_isUnauthenticated_everywhereButTheOpenRoutes() async throws {
        try await TestHome.inProcess { home in
            for path in ["devices", "rooms", "structures", "discovered", "catalog", "me", "users", "grants"] {
                let r = try await home.call("GET", path)
                #expect(r.status == 401, "GET \(path) without a token")
                #expect(r.errorCode == "unauthenticated")
            }
            let bogus = try await home.call("GET", "devices", token: "husr_not-a-real-token")
            #expect(bogus.status == 401)
            #expect(try await home.call("GET", "health").status == 200)
        }
    }
}
