import Foundation
import HTTPTypes
import NIOWebSocket
import HomeModel
import HummingbirdWSClient
import Logging

/// A real WebSocket client for tests: sends JSON messages and awaits the server's, with no
/// sleeping (each read awaits the next frame).
struct SocketProbe {
    var iterator: WebSocketInboundMessageStream.AsyncIterator
    let outbound: WebSocketOutboundWriter

    /// The next message as JSON; nil when the socket closed.
    mutating func next() async throws -> Value? {
        while let message = try await iterator.next() {
            guard case .text(let text) = message else { continue }
            return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        }
        return nil
    }

    /// The next message whose `type` is one of `types` (others are skipped); nil on close.
    mutating func next(_ types: String...) async throws -> Value? {
        while let m = try await next() {
            if let t = m["type"]?.stringValue, types.contains(t) { return m }
        }
        return nil
    }

    func send(_ json: String) async throws { try await outbound.write(.text(json)) }

    /// Opens `/api/v1/ws` with the token and runs `body` on the open socket.
    static func with(
        _ home: TestHome, token: String?, _ body: @escaping @Sendable (inout SocketProbe) async throws -> Void
    ) async throws {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        var logger = Logger(label: "test.ws")
        logger.logLevel = .critical
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(home.port)/api/v1/ws", configuration: .init(maxFrameSize: 1 << 22, additionalHeaders: headers), logger: logger
        ) { inbound, outbound, _ in
            var probe = SocketProbe(iterator: inbound.messages(maxSize: 1 << 24).makeAsyncIterator(), outbound: outbound)
            try await body(&probe)
            try? await outbound.close(.normalClosure, reason: nil)
        }
    }
}
