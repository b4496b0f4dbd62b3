import Foundation
import HTTPTypes
import NIOWebSocket
import HearthAPI
import HomeModel
import HummingbirdWSClient
import Logging

/// One subscription over its own WebSocket: subscribe, then the server's messages for it
/// until the subscription ends, the socket closes or the consumer stops listening.
///
/// If the consumer of a `stream` or `deviceUpdates` subscription falls so far behind that the
/// local buffer overflows, the feed asks the server for a fresh subscription, whose first
/// message is a new snapshot, or every device (a resync).
enum WebSocketFeed {
    /// Messages for one subscription; finishes on `end`, `closing` or a closed socket.
    static func messages(
        _ connection: HearthConnection, subscribe: WSClientMessage, buffer: Int
    ) -> AsyncStream<WSServerMessage> {
        let (stream, continuation) = AsyncStream<WSServerMessage>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        let (stop, stopContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            var headers = HTTPFields()
            if let token = connection.token { headers[.authorization] = "Bearer \(token)" }
            var logger = Logger(label: "hearth.client.ws")
            logger.logLevel = .critical
            do {
                try await WebSocketClient.connect(
                    url: connection.webSocketURL,
                    configuration: .init(maxFrameSize: 1 << 22, additionalHeaders: headers), logger: logger
                ) { inbound, outbound, _ in
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await _ in stop {
                                try? await outbound.close(.normalClosure, reason: nil)
                                return
                            }
                        }
                        group.addTask {
                            var generation = 0
                            var current = subscribe.id ?? "s"
                            // A stream that falls behind starts over (for the device feeds: every device again).
                            let resyncs: SubscriptionQuery?
                            switch subscribe {
                            case .subscribe(_, let q):
                                switch q {
                                case .devices(.stream), .discovered(.stream), .rooms(.stream), .structures(.stream), .deviceUpdates, .deviceDeltas:
                                    resyncs = q
                                default: resyncs = nil
                                }
                            default: resyncs = nil
                            }
                            func send(_ m: WSClientMessage) async -> Bool {
                                guard let data = try? HearthConnection.encoder.encode(m) else { return false }
                                return (try? await outbound.write(.text(String(decoding: data, as: UTF8.self)))) != nil
                            }
                            guard await send(subscribe) else { return }
                            do {
                                read: for try await message in inbound.messages(maxSize: 1 << 24) {
                                    guard case .text(let text) = message,
                                        let m = try? HearthConnection.decoder.decode(WSServerMessage.self, from: Data(text.utf8))
                                    else { continue }
                                    if case .closing = m {
                                        continuation.yield(m)
                                        break read
                                    }
                                    guard m.id == current else { continue }
                                    switch m {
                                    case .subscribed, .unsubscribed: continue
                                    case .end, .error:
                                        continuation.yield(m)
                                        break read
                                    default: break
                                    }
                                    let result = continuation.yield(m)
                                    if let resyncs, case .dropped = result {
                                        // Fell behind: start over with a fresh snapshot.
                                        _ = await send(.unsubscribe(id: current))
                                        generation += 1
                                        current = (subscribe.id ?? "s") + "~\(generation)"
                                        guard await send(.subscribe(id: current, resyncs)) else { break read }
                                    }
                                }
                            } catch {
                                // The socket failed; the feed ends.
                            }
                            try? await outbound.close(.normalClosure, reason: nil)
                        }
                        await group.next()
                        group.cancelAll()
                    }
                }
            } catch {
                continuation.yield(
                    .error(id: subscribe.id, WireError(code: .unreachable, message: "the WebSocket to \(connection.webSocketURL) failed: \(error)")))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            stopContinuation.yield()
            stopContinuation.finish()
            _ = task
        }
        return stream
    }
}
