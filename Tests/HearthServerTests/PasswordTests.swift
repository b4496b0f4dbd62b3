import Foundation
import HearthServer
import HomeCore
import HomeModel
import HomeStorage
import DriverTesting
import Testing

/// Changing one's password and an admin's reset, over real HTTP against real SQLite: the new
/// password works, the old one stops, and every other session ends at once.
@Suite struct PasswordTests {
    static func login(_ home: TestHome, _ user: String, _ password: String) async throws -> TestHome.Reply {
        try await home.call("POST", "auth/login", body: "{\"username\":\"\(user)\",\"password\":\"\(password)\"}")
    }

    /// Opens a WebSocket with `token` and subscribes, runs `action`, and expects the server
    /// to tell the socket its session ended (`closing` with `permissionDenied`).
    static func expectSocketEnded(_ home: TestHome, token: String, by action: @escaping @Sendable () async throws -> Void) async throws {
        try await SocketProbe.with(home, token: token) { socket in
            try await socket.send(#"{"type":"subscribe","id":"d","query":"devices","mode":"stream"}"#)
            #expect(try await socket.next("snapshot")?["id"] == "d")
            try await action()
            let closing = try await socket.next("closing")
            #expect(closing?["error"]?["code"] == "permissionDenied")
        }
        #expect(home.core.observerCount == 0, "the ended session's subscriptions are gone")
    }

    @Test func change_swapsThePassword_andKeepsTheCallersSession() async throws {
        try await TestHome.with { home in
            let member = try home.memberToken("mia")
            let r = try await home.call("POST", "auth/password", token: member, body: #"{"current":"member password","new":"a better secret"}"#)
            #expect(r.status == 204, "\(r.text)")
            #expect(try await Self.login(home, "mia", "member password").status == 401)
            #expect(try await Self.login(home, "mia", "a better secret").status == 200)
            #expect(try await home.call("GET", "me", token: member).status == 200, "the session that changed it stays signed in")
        }
    }

    @Test func wrongCurrentPassword_is401_andChangesNothing() async throws {
        try await TestHome.with { home in
            let member = try home.memberToken("mia")
            let r = try await home.call("POST", "auth/password", token: member, body: #"{"current":"not my password","new":"a better secret"}"#)
            #expect(r.status == 401)
            #expect(r.errorCode == "unauthenticated")
            #expect(!r.text.contains("a better secret"))
            #expect(try await Self.login(home, "mia", "member password").status == 200)
            #expect(try await Self.login(home, "mia", "a better secret").status == 401)
            #expect(try await home.call("GET", "me", token: member).status == 200, "a wrong guess does not end the session")
        }
    }

    @Test func weakOrUnchangedNewPassword_is400_withTheRule() async throws {
        try await TestHome.with { home in
            let member = try home.memberToken("mia")
            let short = try await home.call("POST", "auth/password", token: member, body: #"{"current":"member password","new":"short"}"#)
            #expect(short.status == 400)
            #expect(short.errorCode == "invalidArgument")
            #expect(short.json["error"]?["message"]?.stringValue?.contains("at least 8 characters") == true, "\(short.text)")
            let same = try await home.call("POST", "auth/password", token: member, body: #"{"current":"member password","new":"member password"}"#)
            #expect(same.status == 400, "\(same.text)")
            #expect(try await Self.login(home, "mia", "member password").status == 200)
        }
    }

    @Test func change_endsTheUsersOtherSessions_andClosesTheirSockets() async throws {
        try await TestHome.with { home in
            let caller = try home.memberToken("mia")
            let other = try home.access.login(username: "mia", password: "member password").token
            let bystander = try home.access.addUser(username: "leo", password: "leo's password", role: .member)
            let leo = try home.access.login(username: bystander.username, password: "leo's password").token
            try await Self.expectSocketEnded(home, token: other) {
                let r = try await home.call("POST", "auth/password", token: caller, body: #"{"current":"member password","new":"a better secret"}"#)
                #expect(r.status == 204, "\(r.text)")
            }
            let after = try await home.call("GET", "me", token: other)
            #expect(after.status == 403)
            #expect(after.errorCode == "permissionDenied")
            #expect(try await home.call("GET", "me", token: caller).status == 200)
            #expect(try await home.call("GET", "me", token: leo).status == 200, "another user's sessions are untouched")
        }
    }

    @Test func failedChanges_countInTheLoginRateLimiter() async throws {
        let clock = ManualClock()
        try await TestHome.with(loginLimiter: RateLimiter(clock: clock, limit: 3, window: .seconds(60))) { home in
            let member = try home.memberToken("mia")
            for _ in 0..<3 {
                let r = try await home.call("POST", "auth/password", token: member, body: #"{"current":"guess guess","new":"a better secret"}"#)
                #expect(r.status == 401)
            }
            let limited = try await home.call("POST", "auth/password", token: member, body: #"{"current":"member password","new":"a better secret"}"#)
            #expect(limited.status == 429)
            #expect(limited.errorCode == "rateLimited")
            #expect(try await Self.login(home, "mia", "member password").status == 429, "the same budget as logins")
            clock.advance(by: .seconds(61))
            let ok = try await home.call("POST", "auth/password", token: member, body: #"{"current":"member password","new":"a better secret"}"#)
            #expect(ok.status == 204, "\(ok.text)")
        }
    }

    @Test func anAppToken_cannotChangeAPassword() async throws {
        try await TestHome.with { home in
            let app = try home.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: false))
            let r = try await home.call("POST", "auth/password", token: app.token, body: #"{"current":"x","new":"a better secret"}"#)
            #expect(r.status == 403)
            #expect(r.errorCode == "permissionDenied")
            #expect(try await home.call("GET", "me", token: app.token).status == 200)
        }
    }

    @Test func unknownOrMissingFields_are400() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let member = try home.memberToken("mia")
            let extra = try await home.call(
                "POST", "auth/password", token: member, body: #"{"current":"member password","new":"a better secret","user":"admin"}"#)
            #expect(extra.status == 400)
            #expect(extra.text.contains("'user'"), "\(extra.text)")
            let missing = try await home.call("POST", "auth/password", token: member, body: #"{"new":"a better secret"}"#)
            #expect(missing.status == 400)
            #expect(missing.text.contains("'current'"), "\(missing.text)")
            let resetExtra = try await home.call("PUT", "users/mia/password", token: admin, body: #"{"password":"a better secret","role":"admin"}"#)
            #expect(resetExtra.status == 400)
            #expect(resetExtra.text.contains("'role'"), "\(resetExtra.text)")
            #expect(try await Self.login(home, "mia", "member password").status == 200)
        }
    }

    @Test func aMember_cannotResetAnotherUsersPassword() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let member = try home.memberToken("mia")
            let r = try await home.call("PUT", "users/admin/password", token: member, body: #"{"password":"taken over"}"#)
            #expect(r.status == 403)
            #expect(r.errorCode == "permissionDenied")
            #expect(try await Self.login(home, "admin", "correct horse").status == 200)
            #expect(try await Self.login(home, "admin", "taken over").status == 401)
            #expect(try await home.call("GET", "me", token: admin).status == 200)
        }
    }

    @Test func adminReset_setsThePassword_andEndsTheTargetsSessions() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let member = try home.memberToken("mia")
            try await Self.expectSocketEnded(home, token: member) {
                let r = try await home.call("PUT", "users/mia/password", token: admin, body: #"{"password":"reset by admin"}"#)
                #expect(r.status == 204, "\(r.text)")
            }
            #expect(try await home.call("GET", "rooms", token: member).status == 403)
            #expect(try await Self.login(home, "mia", "member password").status == 401)
            #expect(try await Self.login(home, "mia", "reset by admin").status == 200)
            #expect(try await home.call("GET", "me", token: admin).status == 200)

            let unknown = try await home.call("PUT", "users/nobody/password", token: admin, body: #"{"password":"reset by admin"}"#)
            #expect(unknown.status == 404)
            let weak = try await home.call("PUT", "users/mia/password", token: admin, body: #"{"password":"short"}"#)
            #expect(weak.status == 400)
        }
    }

    @Test func cli_passwdAndResetPassword() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            _ = try home.memberToken("mia")
            let cli = try CLI(home: home)
            let login = try await cli.run(
                ["login", "--url", home.baseURL.absoluteString, "--username", "mia", "--password-stdin"], stdin: "member password\n")
            #expect(login.status == 0, "\(login.output)")

            let wrong = try await cli.run(["passwd", "--password-stdin"], stdin: "not it at all\na better secret\n")
            #expect(wrong.status != 0)
            #expect(wrong.output.contains("wrong current password"), "\(wrong.output)")

            let changed = try await cli.run(["passwd", "--password-stdin"], stdin: "member password\na better secret\n")
            #expect(changed.status == 0, "\(changed.output)")
            #expect(changed.output.contains("Password changed"), "\(changed.output)")
            #expect(try await cli.run(["devices"]).status == 0, "the CLI's own session stays signed in")
            #expect(try await Self.login(home, "mia", "a better secret").status == 200)

            let refused = try await cli.run(["users", "reset-password", "admin", "--password-stdin"], stdin: "taken over\n")
            #expect(refused.status != 0)
            #expect(refused.output.contains("permissionDenied"), "\(refused.output)")

            let adminCLI = try CLI(home: home)
            try adminCLI.signIn(home: home, token: admin)
            let reset = try await adminCLI.run(["users", "reset-password", "mia", "--password-stdin"], stdin: "reset by admin\n")
            #expect(reset.status == 0, "\(reset.output)")
            #expect(try await Self.login(home, "mia", "reset by admin").status == 200)
            let signedOut = try await cli.run(["devices"])
            #expect(signedOut.status != 0, "mia's CLI session ended with the reset: \(signedOut.output)")
        }
    }
}
