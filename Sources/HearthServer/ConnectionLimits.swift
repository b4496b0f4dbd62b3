import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// What keeps idle or slow clients from holding a listener's file descriptors: each connection
/// must send a whole request head within `headerTimeout` of connecting, is closed after
/// `idleTimeout` without a request, and a listener holds at most `maxConnections` at once (more
/// wait in the kernel's backlog until one closes; reaching the cap is logged).
public struct ConnectionLimits: Sendable, Equatable {
    /// From accepting a connection until its first request head is complete.
    public var headerTimeout: Duration
    /// A kept-alive connection without a request (or with an unfinished head) is closed after this.
    public var idleTimeout: Duration
    /// Most connections one listener holds open at once.
    public var maxConnections: Int

    public init(headerTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60), maxConnections: Int = 512) {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
    }

    /// The server that ``Application`` runs: `base`'s child channel behind the header deadline,
    /// with the idle timeout in `base`'s own HTTP/1 configuration.
    func serverBuilder<Inner: ServerChildChannel>(
        refusesUpgrade: (@Sendable (String, HTTPHeaders) -> Bool)? = nil, _ base: @escaping @Sendable (@escaping HTTPChannelHandler.Responder) -> Inner
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { [headerTimeout] responder in
            HeaderDeadlineChannel(inner: base(responder), headerTimeout: headerTimeout, refusesUpgrade: refusesUpgrade)
        }
    }

    /// The server configuration on `address`, with the connection cap (logged when reached as
    /// `listener`).
    func serverConfiguration(address: BindAddress, listener: String, logger: Logger) -> ApplicationConfiguration {
        .init(
            address: address, serverName: "hearthd",
            availableConnectionsDelegate: ConnectionCap(max: maxConnections, listener: listener, logger: logger))
    }

    var idleTimeAmount: TimeAmount { .nanoseconds(Int64(idleTimeout.components.seconds) * 1_000_000_000 + idleTimeout.components.attoseconds / 1_000_000_000) }
}

/// Hummingbird's connection cap, plus one warning each time the cap is reached, naming the
/// listener and the setting.
struct ConnectionCap: AvailableConnectionsDelegate {
    let max: Int
    let listener: String
    let logger: Logger
    var open = 0

    mutating func connectionOpened() {
        open += 1
        if open == max {
            logger.warning(
                "connection limit reached: \(listener) holds \(max) open connections; new ones wait until one closes (server.maxConnections)")
        }
    }

    mutating func connectionClosed() { open -= 1 }

    func isAcceptingNewConnections() -> Bool { open < max }
}

/// A child channel that closes a connection whose first request head (up to the blank line) has
/// not arrived within `headerTimeout`. Hummingbird's idle timeout only starts once a head has
/// been parsed on an upgradable (WebSocket) channel, so a client that connects and sends
/// nothing, or half a head, would otherwise hold its descriptor for ever.
struct HeaderDeadlineChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let headerTimeout: Duration
    /// See ``RefusedUpgradeHandler``; nil on a listener without WebSockets.
    var refusesUpgrade: (@Sendable (String, HTTPHeaders) -> Bool)? = nil

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(HeaderDeadlineHandler(timeout: headerTimeout, logger: logger), position: .first)
        }.flatMap { inner.setup(channel: channel, logger: logger) }.flatMapThrowing { value in
            if let refusesUpgrade {
                let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try channel.pipeline.syncOperations.addHandler(RefusedUpgradeHandler(refuses: refusesUpgrade), position: .after(decoder))
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }
}

/// Watches the raw bytes for the end of the first request head (`\r\n\r\n`); closes the
/// connection if it does not come in time, and removes itself once it has.
final class HeaderDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let timeout: Duration
    let logger: Logger
    var deadline: Scheduled<Void>?
    /// How many bytes of `\r\n\r\n` the data so far ends with.
    var matched = 0
    var done = false

    init(timeout: Duration, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let nanoseconds = Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { [logger] in
            let context = loopBound.value
            logger.debug(
                "closing a connection that sent no complete request head in time",
                metadata: ["peer": "\(context.channel.remoteAddress?.description ?? "?")"])
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !done {
            let pattern: [UInt8] = [13, 10, 13, 10]
            for byte in unwrapInboundIn(data).readableBytesView {
                matched = byte == pattern[matched] ? matched + 1 : (byte == 13 ? 1 : 0)
                if matched == 4 {
                    done = true
                    break
                }
            }
        }
        context.fireChannelRead(data)
        if done {
            deadline?.cancel()
            deadline = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

/// Hummingbird answers an upgrade its router refuses with a bare `400` before any middleware
/// sees it. This handler, between the HTTP decoder and the upgrade handler, takes the
/// `Upgrade` header off a WebSocket request that `refuses` (no or unknown token, a foreign
/// page's `Origin`): the request then goes through the router as plain HTTP, which answers
/// `401`/`403` with the JSON error every route uses.
final class RefusedUpgradeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    let refuses: @Sendable (_ uri: String, _ headers: HTTPHeaders) -> Bool

    init(refuses: @escaping @Sendable (_ uri: String, _ headers: HTTPHeaders) -> Bool) { self.refuses = refuses }

    /// Only a connection's first request can be upgraded; after it this handler leaves the
    /// pipeline (an upgraded connection then carries WebSocket frames, not HTTP parts).
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if head.headers.contains(name: "upgrade"), refuses(head.uri, head.headers) {
            head.headers.remove(name: "upgrade")
            head.headers.replaceOrAdd(name: "connection", value: "close")
            context.fireChannelRead(wrapInboundOut(.head(head)))
        } else {
            context.fireChannelRead(data)
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
