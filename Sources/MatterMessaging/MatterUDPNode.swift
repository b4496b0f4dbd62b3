import Foundation
import Synchronization

/// What a protocol handler receives: a message on one of its exchanges, or the news that a
/// reliable message on one was never acknowledged.
public enum ExchangeEvent: Sendable {
    case message(IncomingMessage)
    case failed(ExchangeKey, MessagingError)
}

/// The thin owner of a `MessageLayer`: one UDP socket (IPv6 dual-stack, or IPv4), the clock,
/// and dispatch by protocol. The state machine runs under a lock; datagrams are sent and
/// events delivered after the lock is released.
///
/// ```swift
/// let node = try MatterUDPNode(port: 5540)
/// let secureChannel = node.events(for: .secureChannel)   // before run()
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await node.run() }
///     for await event in secureChannel { … node.send(…) … }
/// }
/// ```
public final class MatterUDPNode<C: Clock>: Sendable where C.Duration == Duration {
    private let socket: UDPSocket
    private let clock: C
    private let layer: Mutex<MessageLayer<C.Instant>>
    private let streams = Mutex<[ProtocolID: AsyncStream<ExchangeEvent>.Continuation]>([:])
    /// How long one wait for datagrams may block before timers are checked again.
    private let pollInterval: Int32

    /// Messages refused so far, and who hears of each refusal.
    private let drops = Mutex<(count: Int, observer: (@Sendable (String) -> Void)?)>((0, nil))

    /// Messages the message layer refused so far (malformed, not authentic, a duplicate or
    /// replayed counter, an unknown session …).
    public var droppedMessages: Int { drops.withLock { $0.count } }

    /// Calls `observer` with the reason of each message the layer refuses (on the receive thread).
    public func onDropped(_ observer: @escaping @Sendable (String) -> Void) { drops.withLock { $0.observer = observer } }

    /// The UDP port bound (useful with port 0).
    public var port: UInt16 { socket.port }
    /// Whether the socket is IPv6 (dual-stack) rather than IPv4 only.
    public var isDualStack: Bool { socket.isIPv6 }

    /// Binds a UDP socket on `port` (0 for any free port) on all addresses.
    public init(port: UInt16, clock: C, configuration: MRPConfiguration = .default, seed: UInt64 = UInt64.random(in: 0...UInt64.max),
                pollIntervalMilliseconds: Int32 = 5) throws(MessagingError) {
        socket = try UDPSocket(port: port)
        self.clock = clock
        layer = Mutex(MessageLayer(configuration: configuration, seed: seed))
        pollInterval = pollIntervalMilliseconds
    }

    deinit {
        socket.close()
        for c in streams.withLock({ $0.values }) { c.finish() }
    }

    /// The events of one protocol: new exchanges the peer starts (unsolicited messages are
    /// accepted for it from now on) and messages and failures on its exchanges.
    public func events(for protocolID: ProtocolID) -> AsyncStream<ExchangeEvent> {
        let (stream, continuation) = AsyncStream<ExchangeEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        streams.withLock { $0[protocolID]?.finish(); $0[protocolID] = continuation }
        layer.withLock { $0.acceptUnsolicited(protocolID) }
        return stream
    }

    /// Runs the state machine on `body` under the lock, then carries out its effects.
    public func withLayer<T: Sendable>(_ body: (inout MessageLayer<C.Instant>, C.Instant) throws(MessagingError) -> (T, [MessageEffect])) throws(MessagingError) -> T {
        let now = clock.now
        let result: Result<(T, [MessageEffect]), MessagingError> = layer.withLock { l in
            do throws(MessagingError) { return .success(try body(&l, now)) } catch { return .failure(error) }
        }
        let (value, effects) = try result.get()
        perform(effects)
        return value
    }

    /// Installs a secure session from PASE/CASE.
    @discardableResult
    public func addSecureSession(_ p: SecureSessionParameters) throws(MessagingError) -> SessionKey {
        try withLayer { l, _ throws(MessagingError) in (try l.addSecureSession(p), []) }
    }

    /// Starts an exchange on a session.
    public func newExchange(on session: SessionKey, protocolID: ProtocolID) throws(MessagingError) -> ExchangeKey {
        try withLayer { l, _ throws(MessagingError) in (try l.newExchange(on: session, protocolID: protocolID), []) }
    }

    /// Starts an exchange on a new unsecured session (PASE/CASE initiator).
    public func newUnsecuredExchange(to peer: PeerAddress, protocolID: ProtocolID = .secureChannel) -> ExchangeKey {
        (try? withLayer { l, _ throws(MessagingError) in (l.newUnsecuredExchange(to: peer, protocolID: protocolID), []) })!
    }

    /// Sends a message on an exchange (reliable by default).
    public func send(on exchange: ExchangeKey, opcode: UInt8, payload: [UInt8], protocolID: ProtocolID? = nil,
                     reliable: Bool = true) throws(MessagingError) {
        try withLayer { l, now throws(MessagingError) in
            ((), try l.send(on: exchange, opcode: opcode, payload: payload, protocolID: protocolID, reliable: reliable, now: now))
        }
    }

    /// Closes an exchange (a pending ack is sent at once).
    public func close(_ exchange: ExchangeKey) {
        try? withLayer { l, now throws(MessagingError) in ((), l.close(exchange, now: now)) }
    }

    /// Receives datagrams and fires timers until the task is cancelled.
    ///
    /// The blocking `poll` loop runs on a thread of its own, never on a thread of the
    /// cooperative pool (two nodes polling there would starve every other task).
    public func run() async {
        let stopped = StopFlag()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let thread = Thread { [self] in
                    while !stopped.flag.load(ordering: .acquiring) { pollOnce() }
                    done.resume()
                }
                thread.name = "matter-udp"
                thread.start()
            }
        } onCancel: {
            stopped.flag.store(true, ordering: .releasing)
        }
        for c in streams.withLock({ $0.values }) { c.finish() }
    }

    /// One turn of the receive loop: datagrams that arrived within the poll interval, then due timers.
    private func pollOnce() {
        for (bytes, from) in socket.receive(timeoutMilliseconds: pollInterval) {
            let now = clock.now
            perform(layer.withLock { $0.receive(bytes, from: from, now: now) })
        }
        let now = clock.now
        perform(layer.withLock { l in
            guard let due = l.nextDeadline, due <= now else { return [] }
            return l.advance(to: now)
        })
    }

    private func perform(_ effects: [MessageEffect]) {
        for effect in effects {
            switch effect {
            case .send(let bytes, let to):
                socket.send(bytes, to: to)
            case .deliver(let message):
                _ = streams.withLock { $0[message.protocolID] }?.yield(.message(message))
            case .exchangeFailed(let key, let error):
                for c in streams.withLock({ Array($0.values) }) { c.yield(.failed(key, error)) }
            case .dropped(let reason):
                let observer = drops.withLock { d in
                    d.count += 1
                    return d.observer
                }
                observer?(reason)
            }
        }
    }
}

extension MatterUDPNode where C == ContinuousClock {
    /// Binds a UDP socket on `port` using the continuous clock.
    public convenience init(port: UInt16, configuration: MRPConfiguration = .default) throws(MessagingError) {
        try self.init(port: port, clock: ContinuousClock(), configuration: configuration)
    }
}

/// A stop flag the poll thread and the cancellation handler share.
private final class StopFlag: Sendable {
    let flag = Atomic<Bool>(false)
}
