/// The message layer as a pure state machine (Matter Core Specification 4.4–4.12): sessions,
/// message counters with replay protection, exchanges, and MRP (retransmission with backoff,
/// piggybacked and standalone acks, duplicate detection).
///
/// Nothing here does I/O or reads a clock: every input takes `now` and returns the effects to
/// carry out (send a datagram, deliver a message, report a failed exchange). `nextDeadline`
/// says when `advance(to:)` must be called next. `MatterUDPNode` owns one and does the I/O;
/// tests drive it with a manual clock.
public struct MessageLayer<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public let configuration: MRPConfiguration
    private var rng: SplitMix64
    private var unencryptedCounter: MessageCounter
    private var secure: [UInt16: SecureSession<Instant>] = [:]
    private var unsecured: [SessionKey: UnsecuredSession<Instant>] = [:]
    private var exchanges: [ExchangeKey: ExchangeState<Instant>] = [:]
    private var nextExchangeID: UInt16
    private var unsolicited: Set<ProtocolID> = [.secureChannel]
    /// MRP parameters for peers of unsecured sessions (the defaults unless told otherwise).
    public var unsecuredPeerMRP = MRPParameters.default

    /// - Parameter seed: seeds the counters, exchange IDs, ephemeral node IDs and jitter
    ///   (tests pass a fixed seed; production passes a random one).
    public init(configuration: MRPConfiguration = .default, seed: UInt64) {
        self.configuration = configuration
        rng = SplitMix64(seed: seed)
        unencryptedCounter = .globalUnencrypted(using: &rng)
        nextExchangeID = UInt16.random(in: 0...UInt16.max, using: &rng)
    }

    // MARK: Sessions and exchanges

    /// Accepts unsolicited messages (new exchanges started by peers) for this protocol. The
    /// Secure Channel protocol is accepted from the start.
    public mutating func acceptUnsolicited(_ protocolID: ProtocolID) {
        unsolicited.insert(protocolID)
    }

    /// Installs a secure session that PASE or CASE established.
    @discardableResult
    public mutating func addSecureSession(_ parameters: SecureSessionParameters) throws(MessagingError) -> SessionKey {
        guard parameters.localSessionID != 0 else { throw MessagingError(.unknownSession, "session ID 0 is the unsecured session") }
        guard secure[parameters.localSessionID] == nil else {
            throw MessagingError(.busy, "session ID \(parameters.localSessionID) is in use")
        }
        secure[parameters.localSessionID] = try SecureSession(parameters, counter: .secureSession(using: &rng))
        return .secure(localSessionID: parameters.localSessionID)
    }

    /// Removes a session and every exchange on it (without failing them).
    public mutating func removeSession(_ key: SessionKey) {
        switch key {
        case .secure(let id): secure[id] = nil
        case .unsecured: unsecured[key] = nil
        }
        exchanges = exchanges.filter { $0.key.session != key }
    }

    /// A session ID that is not in use (1…65535), for PASE/CASE to offer.
    public mutating func freeSessionID() -> UInt16 {
        for _ in 0..<70_000 {
            let id = UInt16.random(in: 1...UInt16.max, using: &rng)
            if secure[id] == nil { return id }
        }
        preconditionFailure("no free session ID")
    }

    /// Starts an exchange on an existing session; send its first message with `send`.
    public mutating func newExchange(on session: SessionKey, protocolID: ProtocolID) throws(MessagingError) -> ExchangeKey {
        switch session {
        case .secure(let id): guard secure[id] != nil else { throw MessagingError(.unknownSession, "no session \(id)") }
        case .unsecured: guard unsecured[session] != nil else { throw MessagingError(.unknownSession, "no \(session)") }
        }
        let key = ExchangeKey(session: session, exchangeID: allocateExchangeID(), weInitiated: true)
        exchanges[key] = ExchangeState(protocolID: protocolID)
        return key
    }

    /// Starts an exchange on a new unsecured session to `peer` (with a fresh ephemeral
    /// initiator node ID), for PASE or CASE.
    public mutating func newUnsecuredExchange(to peer: PeerAddress, protocolID: ProtocolID = .secureChannel) -> ExchangeKey {
        let ephemeral = rng.next() | 1  // never 0 (unspecified)
        let session = SessionKey.unsecured(peer: peer, ephemeralNodeID: ephemeral)
        unsecured[session] = UnsecuredSession(weInitiated: true)
        let key = ExchangeKey(session: session, exchangeID: allocateExchangeID(), weInitiated: true)
        exchanges[key] = ExchangeState(protocolID: protocolID)
        return key
    }

    private mutating func allocateExchangeID() -> UInt16 {
        defer { nextExchangeID &+= 1 }
        return nextExchangeID
    }

    /// Whether an exchange is open (not closed and not failed).
    public func isOpen(_ exchange: ExchangeKey) -> Bool { exchanges[exchange].map { !$0.closed } ?? false }

    /// Whether a reliable message on this exchange still waits for its ack.
    public func awaitsAck(_ exchange: ExchangeKey) -> Bool { exchanges[exchange]?.retransmission != nil }

    /// The sessions and exchanges held (for tests and diagnostics).
    public var exchangeCount: Int { exchanges.count }

    // MARK: Sending

    /// Sends a message on an exchange. A pending ack rides along (piggybacked). A reliable
    /// message is kept for retransmission until acked; only one may be outstanding per exchange.
    public mutating func send(on exchange: ExchangeKey, opcode: UInt8, payload: [UInt8], protocolID: ProtocolID? = nil,
                              reliable: Bool = true, now: Instant) throws(MessagingError) -> [MessageEffect] {
        guard var state = exchanges[exchange], !state.closed else {
            throw MessagingError(.exchangeClosed, "exchange \(exchange) is closed")
        }
        if reliable, state.retransmission != nil {
            throw MessagingError(.busy, "exchange \(exchange) already has a message awaiting its ack")
        }
        var ph = ProtocolHeader(isInitiator: exchange.weInitiated, needsAck: reliable, opcode: opcode,
                                exchangeID: exchange.exchangeID, protocolID: protocolID ?? state.protocolID)
        if let ack = state.pendingAck {
            ph.ackedCounter = ack.counter
            state.pendingAck = nil
        }
        let (datagram, counter, peer) = try seal(ph, payload, on: exchange.session)
        if reliable {
            state.retransmission = Retransmission(datagram: datagram, counter: counter, peer: peer, transmissions: 1,
                                                  due: now.advanced(by: backoff(exchange.session, transmission: 0, now: now)))
        }
        exchanges[exchange] = state
        return [.send(datagram, to: peer)]
    }

    /// Closes an exchange: a pending ack goes out at once as a standalone ack; a reliable
    /// message still in flight keeps being retransmitted until acked or given up.
    public mutating func close(_ exchange: ExchangeKey, now: Instant) -> [MessageEffect] {
        guard var state = exchanges[exchange] else { return [] }
        var effects: [MessageEffect] = []
        if let ack = state.pendingAck {
            effects += standaloneAck(for: ack.counter, exchange: exchange)
            state.pendingAck = nil
        }
        state.closed = true
        exchanges[exchange] = state.retransmission == nil ? nil : state
        return effects
    }

    private mutating func seal(_ ph: ProtocolHeader, _ payload: [UInt8], on session: SessionKey) throws(MessagingError) -> ([UInt8], UInt32, PeerAddress) {
        switch session {
        case .secure(let id):
            guard var s = secure[id] else { throw MessagingError(.unknownSession, "no session \(id)") }
            let counter = try s.counter.take()
            secure[id] = s
            let header = MessageHeader(sessionID: s.parameters.peerSessionID, messageCounter: counter)
            let datagram = MessageCodec.encodeSecured(header, ph, payload, key: s.encrypt, nonceNodeID: s.parameters.localNodeID,
                                                      privacyKey: s.parameters.privacy ? s.privacyEncrypt : nil)
            return (datagram, counter, s.parameters.peerAddress)
        case .unsecured(let peer, let ephemeral):
            guard let u = unsecured[session] else { throw MessagingError(.unknownSession, "no \(session)") }
            let counter = try unencryptedCounter.take()
            var header = MessageHeader(sessionID: 0, messageCounter: counter)
            if u.weInitiated { header.sourceNodeID = ephemeral } else { header.destination = .node(ephemeral) }
            return (MessageCodec.encodeUnsecured(header, ph, payload), counter, peer)
        }
    }

    private mutating func standaloneAck(for counter: UInt32, exchange: ExchangeKey) -> [MessageEffect] {
        var ph = ProtocolHeader(isInitiator: exchange.weInitiated, opcode: SecureChannelOpcode.standaloneAck.rawValue,
                                exchangeID: exchange.exchangeID, protocolID: .secureChannel)
        ph.ackedCounter = counter
        guard let (datagram, _, peer) = try? seal(ph, [], on: exchange.session) else { return [] }
        return [.send(datagram, to: peer)]
    }

    private mutating func backoff(_ session: SessionKey, transmission n: Int, now: Instant) -> Duration {
        let mrp: MRPParameters
        let last: Instant?
        switch session {
        case .secure(let id):
            mrp = secure[id]?.parameters.peerMRP ?? .default
            last = secure[id]?.lastReceived
        case .unsecured:
            mrp = unsecuredPeerMRP
            last = unsecured[session]?.lastReceived
        }
        let active = last.map { $0.duration(to: now) < mrp.activeThreshold } ?? false
        let jitter = Double(rng.next() >> 11) / Double(1 << 53)
        return configuration.backoff(baseInterval: active ? mrp.activeInterval : mrp.idleInterval, transmission: n, jitter: jitter)
    }

    // MARK: Receiving

    /// Handles one received datagram.
    public mutating func receive(_ datagram: [UInt8], from peer: PeerAddress, now: Instant) -> [MessageEffect] {
        let session: SessionKey
        let header: MessageHeader
        let ph: ProtocolHeader
        let payload: [UInt8]
        do {
            let peek = try MessageCodec.peekSession(datagram)
            if peek.type == .group {
                return [.dropped("group messages are not handled")]
            }
            if peek.sessionID == 0 {
                (header, ph, payload) = try MessageCodec.decodeUnsecured(datagram)
                if let source = header.sourceNodeID, case .none = header.destination {
                    session = .unsecured(peer: peer, ephemeralNodeID: source)
                    if unsecured[session] == nil {
                        // Only a peer starting an exchange may open an unsecured session with us.
                        guard ph.isInitiator else { return [.dropped("unsecured message for no session")] }
                        unsecured[session] = UnsecuredSession(weInitiated: false)
                    }
                } else if case .node(let dest) = header.destination, header.sourceNodeID == nil {
                    session = .unsecured(peer: peer, ephemeralNodeID: dest)
                    guard unsecured[session] != nil else { return [.dropped("unsecured reply for no session")] }
                } else {
                    return [.dropped("unsecured message without an ephemeral node ID")]
                }
                guard unsecured[session]!.reception.accept(header.messageCounter) else {
                    return duplicate(ph, counter: header.messageCounter, session: session)
                }
                unsecured[session]!.lastReceived = now
            } else {
                guard var s = secure[peek.sessionID] else { return [.dropped("unknown session \(peek.sessionID)")] }
                (header, ph, payload) = try MessageCodec.decodeSecured(datagram, key: s.decrypt, nonceNodeID: s.parameters.peerNodeID,
                                                                       privacyKey: s.privacyDecrypt)
                session = .secure(localSessionID: peek.sessionID)
                guard s.reception.accept(header.messageCounter) else {
                    return duplicate(ph, counter: header.messageCounter, session: session)
                }
                s.lastReceived = now
                s.parameters.peerAddress = peer  // follow the peer's address (4.12.5.3)
                secure[peek.sessionID] = s
            }
        } catch {
            return [.dropped("\(error)")]
        }

        var effects: [MessageEffect] = []
        let key = ExchangeKey(session: session, exchangeID: ph.exchangeID, weInitiated: !ph.isInitiator)

        // An ack (piggybacked or standalone) ends the retransmission it names.
        if let acked = ph.ackedCounter, var state = exchanges[key], state.retransmission?.counter == acked {
            state.retransmission = nil
            exchanges[key] = state.closed && state.pendingAck == nil ? nil : state
        }
        if ph.isStandaloneAck { return effects }

        var opens = false
        if exchanges[key] == nil || exchanges[key]!.closed {
            guard exchanges[key] == nil, ph.isInitiator, unsolicited.contains(ph.protocolID) else {
                // Nobody will handle it; still acknowledge it so the peer stops retransmitting.
                if ph.needsAck { effects += standaloneAck(for: header.messageCounter, exchange: key) }
                effects.append(.dropped("no exchange for \(key) (\(ph.protocolID) opcode \(ph.opcode))"))
                return effects
            }
            exchanges[key] = ExchangeState(protocolID: ph.protocolID)
            opens = true
        }
        if ph.needsAck {
            if let earlier = exchanges[key]!.pendingAck {
                effects += standaloneAck(for: earlier.counter, exchange: key)
            }
            exchanges[key]!.pendingAck = (header.messageCounter, now.advanced(by: configuration.standaloneAckTimeout))
        }
        effects.append(.deliver(IncomingMessage(exchange: key, opensExchange: opens, header: header, protocolHeader: ph,
                                                payload: payload, from: peer)))
        return effects
    }

    /// A duplicate: acknowledged at once if it asked for an ack, never delivered (4.12.5.2.2).
    private mutating func duplicate(_ ph: ProtocolHeader, counter: UInt32, session: SessionKey) -> [MessageEffect] {
        var effects: [MessageEffect] = []
        if ph.needsAck {
            let key = ExchangeKey(session: session, exchangeID: ph.exchangeID, weInitiated: !ph.isInitiator)
            effects += standaloneAck(for: counter, exchange: key)
        }
        effects.append(.dropped("duplicate message counter \(counter)"))
        return effects
    }

    // MARK: Time

    /// The earliest instant at which `advance(to:)` has something to do.
    public var nextDeadline: Instant? {
        var earliest: Instant?
        for state in exchanges.values {
            for due in [state.pendingAck?.due, state.retransmission?.due].compactMap({ $0 }) where earliest.map({ due < $0 }) ?? true {
                earliest = due
            }
        }
        return earliest
    }

    /// Sends due standalone acks and retransmissions; gives up on exchanges whose last
    /// transmission went unacknowledged.
    public mutating func advance(to now: Instant) -> [MessageEffect] {
        var effects: [MessageEffect] = []
        for key in exchanges.keys.sorted(by: { $0.exchangeID < $1.exchangeID }) {
            guard var state = exchanges[key] else { continue }
            if let ack = state.pendingAck, ack.due <= now {
                effects += standaloneAck(for: ack.counter, exchange: key)
                state.pendingAck = nil
            }
            if var r = state.retransmission, r.due <= now {
                if r.transmissions >= configuration.maxTransmissions {
                    state.retransmission = nil
                    state.closed = true
                    effects.append(.exchangeFailed(key, MessagingError(.retransmitLimit,
                        "no ack after \(r.transmissions) transmissions on \(key)")))
                } else {
                    effects.append(.send(r.datagram, to: r.peer))
                    r.due = now.advanced(by: backoff(key.session, transmission: r.transmissions, now: now))
                    r.transmissions += 1
                    state.retransmission = r
                }
            }
            exchanges[key] = state.closed && state.retransmission == nil && state.pendingAck == nil ? nil : state
        }
        return effects
    }
}

/// SplitMix64: small, fast and seedable, so a test run is repeatable.
struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
