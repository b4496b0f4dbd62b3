import Foundation
import HearthAPI
import HearthClient
import HomeCombine
import HomeCore
import HomeModel
import HomeStorage
import OpenCombine
import Testing

/// Users are observable (HomeKit's didAddUser / didRemoveUser): `users()` lists them and
/// `batched()` / `stream()` follow additions and removals, over HTTP, the WebSocket and the
/// Swift client. Members read names and roles, never credentials; apps are refused.
@Suite(.timeLimit(.minutes(1))) struct UsersObservableTests {
    @Test func member_listsAndObservesUsers_overTheSwiftClient() async throws {
        try await TestHome.with { server in
            let admin = try await HearthClient.Home.setup(
                url: server.baseURL, code: try #require(try server.access.bootstrap()), password: "correct horse")
            _ = try server.memberToken()
            let member = try await HearthClient.Home.signIn(url: server.baseURL, username: "mia", password: "member password")
            #expect(try await member.users().list().map(\.username) == ["admin", "mia"])

            var batched = member.users().batched().makeAsyncIterator()
            var stream = member.users().stream().makeAsyncIterator()
            #expect(await batched.next()?.map(\.username) == ["admin", "mia"])
            guard case .snapshot(let first, _) = await stream.next() else { Issue.record("no snapshot"); return }
            #expect(first.map(\.username) == ["admin", "mia"])

            _ = try await admin.addUser("leo", password: "leo's password", role: .member)
            #expect(await batched.next()?.map(\.username) == ["admin", "leo", "mia"])
            guard case .added(let leo) = await stream.next() else { Issue.record("no added"); return }
            #expect(leo.username == "leo" && leo.role == .member)

            try await admin.removeUser("leo")
            #expect(await batched.next()?.map(\.username) == ["admin", "mia"])
            guard case .removed(let key) = await stream.next() else { Issue.record("no removed"); return }
            #expect(key == "leo")
        }
    }

    @Test func usersPublisher_andTheWireCarryNoCredentials() async throws {
        try await TestHome.with { server in
            let admin = try server.adminToken()
            let member = try server.memberToken()
            let listed = try await server.call("GET", "users", token: member)
            #expect(listed.status == 200, "\(listed.text)")
            for user in listed.json.listValue ?? [] {
                let keys = Set((user.objectValue ?? [:]).keys)
                #expect(keys.isSubset(of: ["username", "role", "hasPassword", "createdAt"]), "\(user)")
            }
            #expect(!listed.text.contains("member password") && !listed.text.lowercased().contains("hash"))

            try await SocketProbe.with(server, token: member) { socket in
                try await socket.send(#"{"type":"subscribe","id":"u","query":"users"}"#)
                let first = try await socket.next("snapshot", "error")
                #expect(first?["users"]?.listValue?.compactMap { $0["username"]?.stringValue } == ["admin", "mia"], "\(String(describing: first))")
                let added = try await server.call("POST", "users", token: admin, body: #"{"username":"ada","password":"ada's password","role":"member"}"#)
                #expect(added.status == 201, "\(added.text)")
                let next = try await socket.next("snapshot", "error")
                #expect(next?["users"]?.listValue?.compactMap { $0["username"]?.stringValue } == ["ada", "admin", "mia"])
            }

            // A member may read, not manage.
            let refused = try await server.call("POST", "users", token: member, body: #"{"username":"eve","password":"eve's password","role":"member"}"#)
            #expect(refused.status == 403)
            #expect(refused.errorCode == "permissionDenied")
        }
    }

    @Test func apps_cannotSeeTheUsers() async throws {
        try await TestHome.with { server in
            let app = try server.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: false))
            let listed = try await server.call("GET", "users", token: app.token)
            #expect(listed.status == 403)
            try await SocketProbe.with(server, token: app.token) { socket in
                try await socket.send(#"{"type":"subscribe","id":"u","query":"users"}"#)
                let answer = try await socket.next("snapshot", "error")
                #expect(answer?["type"] == "error")
                #expect(answer?["error"]?["code"] == "permissionDenied")
            }
        }
    }
}
