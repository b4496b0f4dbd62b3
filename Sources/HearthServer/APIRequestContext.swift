public import Hummingbird
public import HummingbirdWebSocket
public import HomeCore
import NIOCore

/// The request context of the API: who is asking (once the auth middleware ran) and from where.
public struct APIRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    /// The signed-in session; nil on the open routes (login, setup, app requests).
    public var session: AuthSession?
    /// The peer's IP address, for rate limiting.
    public let remoteAddress: String
    /// The connection (a WebSocket's event loop writes subscription deltas to it directly).
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.session = nil
        self.remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        self.channel = source.channel
    }

    /// Request bodies larger than this are refused with 413 before they are decoded.
    public var maxUploadSize: Int { HearthServer.Configuration.defaultMaxBodySize }
}
