/// One exchange: a session, an exchange ID and which side started it (4.10).
public struct ExchangeKey: Hashable, Sendable, CustomStringConvertible {
    public var session: SessionKey
    public var exchangeID: UInt16
    /// Whether this node is the exchange's initiator.
    public var weInitiated: Bool

    public init(session: SessionKey, exchangeID: UInt16, weInitiated: Bool) {
        self.session = session
        self.exchangeID = exchangeID
        self.weInitiated = weInitiated
    }

    public var description: String { "\(session)/\(exchangeID)\(weInitiated ? "i" : "r")" }
}

/// A message delivered to an exchange's handler.
public struct IncomingMessage: Sendable {
    public var exchange: ExchangeKey
    /// True for the first message of an exchange the peer started (an unsolicited message).
    public var opensExchange: Bool
    public var header: MessageHeader
    public var protocolHeader: ProtocolHeader
    public var payload: [UInt8]
    public var from: PeerAddress

    public var protocolID: ProtocolID { protocolHeader.protocolID }
    public var opcode: UInt8 { protocolHeader.opcode }
}

/// What the message layer asks its owner to do.
public enum MessageEffect: Sendable {
    /// Send this datagram.
    case send([UInt8], to: PeerAddress)
    /// Hand this message to the exchange's handler (by protocol for a new exchange).
    case deliver(IncomingMessage)
    /// The last reliable message on this exchange was never acknowledged; the exchange is closed.
    case exchangeFailed(ExchangeKey, MessagingError)
    /// A datagram was dropped (why, for logs and tests).
    case dropped(String)
}

/// The per-exchange state.
struct ExchangeState<Instant: InstantProtocol> {
    var protocolID: ProtocolID
    /// A received reliable message not yet acknowledged, and when a standalone ack is due.
    var pendingAck: (counter: UInt32, due: Instant)?
    /// The reliable message awaiting its ack.
    var retransmission: Retransmission<Instant>?
    var closed = false
}

struct Retransmission<Instant: InstantProtocol> {
    var datagram: [UInt8]
    var counter: UInt32
    var peer: PeerAddress
    var transmissions: Int
    var due: Instant
}
