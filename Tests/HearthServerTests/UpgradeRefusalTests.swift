import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// WebSocket upgrades over a real socket, as a browser sends them: a page from another site is
/// refused even with a valid token in its URL; hearthd's own page and non-browser clients are not.
///
/// (The refusal's status is still the upgrade handler's bare 400, not 401/403: issue #14, open.)
@Suite struct UpgradeRefusalTests {
    /// Sends one raw HTTP/1.1 request to 127.0.0.1:`port` and returns the status line's code.
    static func blockingStatus(port: Int, _ request: String) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        let text = String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self)
        // "HTTP/1.1 401 Unauthorized"
        return text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    }

    /// ``status(port:_:)`` on a dispatch thread: a blocking read must not hold one of the
    /// cooperative threads the server itself needs to answer.
    static func status(port: Int, _ request: String) async throws -> Int {
        let result: Result<Int, any Error> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Result { try blockingStatus(port: port, request) }) }
        }
        return try result.get()
    }

    static func upgrade(port: Int, token: String?, origin: String? = nil) -> String {
        "GET /api/v1/ws\(token.map { "?token=\($0)" } ?? "") HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + (origin.map { "Origin: \($0)\r\n" } ?? "") + "\r\n"
    }

    @Test func a_foreign_pages_upgrade_is_refused_and_our_own_is_not() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let foreign = try await Self.status(port: home.port, Self.upgrade(port: home.port, token: admin, origin: "http://evil.example"))
            #expect(foreign != 101 && foreign >= 400, "\(foreign)")
            #expect(try await Self.status(port: home.port, Self.upgrade(port: home.port, token: admin, origin: "http://127.0.0.1:\(home.port)")) == 101)
            #expect(try await Self.status(port: home.port, Self.upgrade(port: home.port, token: admin)) == 101)
            let anonymous = try await Self.status(port: home.port, Self.upgrade(port: home.port, token: nil))
            #expect(anonymous != 101 && anonymous >= 400, "\(anonymous)")
        }
    }
}
