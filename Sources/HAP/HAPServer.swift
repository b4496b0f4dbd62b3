public import Logging
import NIOCore
import NIOPosix
import Synchronization

/// HAP over TCP (HAP R2 chapter 6) on SwiftNIO: one task per connection reading bytes into a
/// ``HAPConnection``, one writer per connection that encrypts once pair-verify is done.
///
/// ```swift
/// let server = HAPServer(pairing: pairing, handler: bridge, host: "0.0.0.0", port: 51826)
/// try await server.run { port in print("listening on", port) }
/// server.connections.notify([(CharacteristicID(aid: 2, iid: 10), .bool(true))])
/// ```
public final class HAPServer: Sendable {
    public let pairing: PairingServer
    public let handler: any HAPAccessoryHandler
    public let connections: HAPConnections
    public let host: String
    public let port: Int
    let logger: Logger

    public init(
        pairing: PairingServer, handler: any HAPAccessoryHandler, host: String, port: Int, connections: HAPConnections = HAPConnections(),
        logger: Logger = Logger(label: "hearth.hap")
    ) {
        self.connections = connections
        self.pairing = pairing
        self.handler = handler
        self.host = host
        self.port = port
        self.logger = logger
    }

    /// Listens until cancelled; `onListening` gets the bound port (useful with port 0).
    public func run(onListening: @Sendable (Int) -> Void = { _ in }) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let bound = server.channel.localAddress?.port ?? port
        logger.info("HAP listening", metadata: ["address": "\(host):\(bound)"])
        onListening(bound)
        try await withTaskCancellationHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        } onCancel: {
            server.channel.close(promise: nil)
        }
    }

    func serve(_ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        let peer = channel.channel.remoteAddress.map { "\($0)" } ?? "?"
        let (outputs, sink) = AsyncStream<HAPConnection.Output>.makeStream()
        logger.debug("HAP connection", metadata: ["peer": "\(peer)"])
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        var framing: SecureFraming?
                        for await output in outputs {
                            switch output {
                            case .send(let bytes):
                                var wire = bytes
                                if var f = framing {
                                    wire = f.seal(bytes)
                                    framing = f
                                }
                                try await outbound.write(ByteBuffer(bytes: wire))
                            case .startEncryption(let f):
                                framing = f
                            case .close:
                                return false
                            }
                        }
                        return false
                    }
                    group.addTask {
                        // The connection lives in this task only.
                        let connection = HAPConnection(
                            pairing: self.pairing, handler: self.handler, connections: self.connections, sink: sink, logger: self.logger)
                        var reason = "peer closed"
                        do {
                            for try await chunk in inbound {
                                let result = await connection.receive(Array(chunk.readableBytesView))
                                for o in result { sink.yield(o) }
                                if case .close(let why)? = result.last {
                                    reason = why
                                    break
                                }
                            }
                        } catch {
                            reason = "\(error)"
                        }
                        connection.closed(reason: reason)
                        sink.yield(.close(reason))
                        return true
                    }
                    // The reader ends first (a close it decided, or the peer's EOF): it yielded
                    // `.close` last, so the writer sends what is queued before it (the answer to a
                    // request that removed the controller's own pairing) and ends there; at most
                    // 5 s, for a peer that reads nothing. The writer ending first (a failed write)
                    // ends the reader.
                    if try await group.next() == true {
                        group.addTask {
                            try? await Task.sleep(for: .seconds(5))
                            return false
                        }
                        _ = try await group.next()
                    }
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("HAP connection ended: \(error)", metadata: ["peer": "\(peer)"])
        }
        sink.finish()
    }
}
