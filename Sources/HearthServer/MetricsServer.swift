public import Logging
public import ServiceLifecycle
import Hummingbird
import HummingbirdCore
import NIOCore

/// Serves `GET /metrics` alone, without sign-in, on its own address (`metrics.listen` in
/// hearth.yaml): for a Prometheus that scrapes a loopback or private address.
public struct MetricsServer: Service {
    let host: String
    let port: Int
    let render: @Sendable () -> [UInt8]
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void
    let limits: ConnectionLimits

    public init(
        host: String, port: Int, limits: ConnectionLimits = ConnectionLimits(), logger: Logger = Logger(label: "hearth.metrics"),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }, render: @escaping @Sendable () -> [UInt8]
    ) {
        self.host = host
        self.port = port
        self.limits = limits
        self.render = render
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let router = Router()
        router.get("metrics") { [render] _, _ in Self.response(render()) }
        let app = Application(
            router: router,
            server: limits.serverBuilder { [limits] responder in HTTP1Channel(responder: responder, configuration: .init(idleTimeout: limits.idleTimeAmount)) },
            configuration: limits.serverConfiguration(address: .hostname(host, port: port), listener: "the metrics listener", logger: logger),
            onServerRunning: { [logger, onListening] channel in
                logger.info("metrics listening", metadata: ["address": "\(channel.localAddress?.description ?? "?")"])
                await onListening(channel.localAddress?.port ?? 0)
            },
            logger: logger)
        try await app.runService()
    }

    /// Prometheus' text exposition format.
    static func response(_ body: [UInt8]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
