import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// WebSocket upgrades over a real socket, as a browser sends them: a page from another site is
/// refused even with a valid token in its URL; hearthd's own page and non-browser clients are not.
///
/// A refused upgrade answers 401 (no or unknown token) or 403 (a foreign page) with the JSON
/// error every route uses, not the upgrade handler's bare 400.
@Suite struct UpgradeRefusalTests {
    /// Sends one raw HTTP/1.1 request to 127.0.0.1:`port` and returns the response as read
    /// until the server closes (or the first 101's head).
    static func response(port: Int, _ request: String) async throws -> String {
        try await blocking {
            let socket = try RawSocket(port: port)
            socket.send(request)
            let head = socket.read(until: "\r\n\r\n").text
            return RawSocket.status(head) == 101 ? head : head + socket.read().text
        }
    }

    static func status(port: Int, _ request: String) async throws -> Int {
        RawSocket.status(try await response(port: port, request))
    }

    static func upgrade(port: Int, token: String?, origin: String? = nil) -> String {
        "GET /api/v1/ws\(token.map { "?token=\($0)" } ?? "") HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + (origin.map { "Origin: \($0)\r\n" } ?? "") + "\r\n"
    }

    @Test func a_foreign_pages_upgrade_is_refused_and_our_own_is_not() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let foreign = try await Self.response(port: home.port, Self.upgrade(port: home.port, token: admin, origin: "http://evil.example"))
            #expect(RawSocket.status(foreign) == 403, "\(foreign)")
            #expect(foreign.contains("\"permissionDenied\""), "\(foreign)")
            #expect(try await Self.status(port: home.port, Self.upgrade(port: home.port, token: admin, origin: "http://127.0.0.1:\(home.port)")) == 101)
            #expect(try await Self.status(port: home.port, Self.upgrade(port: home.port, token: admin)) == 101)
            let anonymous = try await Self.response(port: home.port, Self.upgrade(port: home.port, token: nil))
            #expect(RawSocket.status(anonymous) == 401, "\(anonymous)")
            #expect(anonymous.contains("\"unauthenticated\""), "\(anonymous)")
            let unknown = try await Self.response(port: home.port, Self.upgrade(port: home.port, token: "not-a-token"))
            #expect(RawSocket.status(unknown) == 401, "\(unknown)")
        }
    }
}
