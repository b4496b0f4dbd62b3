import Foundation
import HearthAPI
import HomeCore
import HomeModel
import HomeStorage
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue #14's server items, in-process against the real router and access store.
@Suite struct HardeningTests {
    @Test func a_query_token_is_only_taken_on_the_websocket_route() async throws {
        try await TestHome.inProcess { home in
            let admin = try home.adminToken()
            let client = try #require(home.client)
            let viaQuery = try await client.execute(uri: "/api/v1/devices?token=\(admin)", method: .get) { $0 }
            #expect(viaQuery.status == .unauthorized)
            #expect(String(buffer: viaQuery.body).contains("only for the WebSocket"))
            // The header still works, and so does the query on the WebSocket route (a plain GET
            // there is authenticated, then refused as no upgrade).
            #expect(try await home.call("GET", "devices", token: admin).status == 200)
            let ws = try await client.execute(uri: "/api/v1/ws?token=\(admin)", method: .get) { $0 }
            #expect(ws.status != .unauthorized)
            let wsWithout = try await client.execute(uri: "/api/v1/ws", method: .get) { $0 }
            #expect(wsWithout.status == .unauthorized)
        }
    }

    @Test func an_app_request_must_be_json_not_a_simple_cross_site_request() async throws {
        try await TestHome.inProcess { home in
            let client = try #require(home.client)
            for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
                let r = try await client.execute(
                    uri: "/api/v1/apps/requests", method: .post, headers: [.contentType: type],
                    body: ByteBuffer(string: #"{"name":"Sneaky"}"#)
                ) { $0 }
                #expect(r.status == .unsupportedMediaType, "\(type)")
            }
            #expect(try home.access.appRequests(pendingOnly: true).isEmpty, "nothing was created")
            let json = try await home.call("POST", "apps/requests", body: #"{"name":"Dashboard"}"#)
            #expect(json.status == 201, "\(json.text)")
        }
    }

    @Test func admin_only_collections_refuse_members_and_apps_before_reading_the_body() async throws {
        try await TestHome.inProcess { home in
            let member = try home.memberToken()
            let app = try home.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: false)).token
            // Members may read the users (names and roles); apps may not. Managing them is for admins.
            for (token, path) in [(app, "users"), (member, "grants"), (app, "apps/requests"), (app, "plugins"), (app, "logs")] {
                let r = try await home.call("GET", path, token: token)
                #expect(r.status == 403, "\(path): \(r.text)")
                #expect(r.errorCode == "permissionDenied")
            }
            // A malformed body is not even looked at: the role decides first.
            let r = try await home.call("POST", "users", token: member, body: "not json")
            #expect(r.status == 403)
        }
    }
}

extension HardeningTests {
    @Test func a_websocket_from_another_sites_page_is_refused() async throws {
        try await TestHome.inProcess { home in
            let admin = try home.adminToken()
            let client = try #require(home.client)
            let foreign = try await client.execute(
                uri: "/api/v1/ws?token=\(admin)", method: .get, headers: [.origin: "http://evil.example"]
            ) { $0 }
            #expect(foreign.status == .forbidden)
            #expect(String(buffer: foreign.body).contains("evil.example"))
            // Not a browser (no Origin): as before.
            let tool = try await client.execute(uri: "/api/v1/ws", method: .get, headers: [.authorization: "Bearer \(admin)"]) { $0 }
            #expect(tool.status != .forbidden && tool.status != .unauthorized, "\(tool.status)")
        }
    }
}
