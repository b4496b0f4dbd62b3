import DriverAPI
import Foundation
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Revoking a token closes its live WebSockets at once and refuses its next call.
@Suite(.timeLimit(.minutes(1))) struct RevocationTests {
    @Test func revokingAGrant_closesItsLiveSubscription_andTheNextCallIsPermissionDenied() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let app = try home.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: false))
            try await SocketProbe.with(home, token: app.token) { socket in
                try await socket.send(#"{"type":"subscribe","id":"d","query":"devices","mode":"stream"}"#)
                #expect(try await socket.next("snapshot")?["id"] == "d")

                let revoke = try await home.call("DELETE", "grants/\(app.id)", token: admin)
                #expect(revoke.status == 204, "\(revoke.text)")

                // The subscription may first get its own `end`; either way it says permissionDenied.
                // Then the socket is told why (`closing`) and closed; nothing else arrives.
                var closing: Value?
                while closing == nil, let m = try await socket.next("closing", "end") {
                    if m["type"] == "end" {
                        #expect(m["id"] == "d")
                        #expect(m["reason"] == "permissionDenied", "\(m)")
                    } else {
                        closing = m
                    }
                }
                #expect(closing?["error"]?["code"] == "permissionDenied", "the socket is closed saying why: \(String(describing: closing))")
                while let m = try await socket.next() { Issue.record("unexpected message after the socket closed: \(m)") }
            }
            let next = try await home.call("GET", "devices", token: app.token)
            #expect(next.status == 403)
            #expect(next.errorCode == "permissionDenied")
            #expect(home.core.observerCount == 0, "the revoked session's subscriptions are gone")
        }
    }

    @Test func logout_revokesTheToken() async throws {
        try await TestHome.with { home in
            let member = try home.memberToken()
            #expect(try await home.call("POST", "auth/logout", token: member).status == 204)
            let after = try await home.call("GET", "me", token: member)
            #expect(after.status == 403)
            #expect(after.errorCode == "permissionDenied")
        }
    }

    @Test func removingAUser_closesTheirSockets() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let member = try home.memberToken("leo")
            try await SocketProbe.with(home, token: member) { socket in
                try await socket.send(#"{"type":"subscribe","id":"r","query":"rooms"}"#)
                #expect(try await socket.next("snapshot") != nil)
                #expect(try await home.call("DELETE", "users/leo", token: admin).status == 204)
                let closing = try await socket.next("closing")
                #expect(closing?["error"]?["code"] == "permissionDenied")
            }
            #expect(try await home.call("GET", "rooms", token: member).status == 403)
        }
    }
}
