public import MatterMessaging
import Synchronization

/// The thin owner of an `InteractionEngine` on a `MatterUDPNode`: IM messages of known
/// sessions go to the engine, its effects to the node; a timer fires subscription reports.
/// The engine runs under a lock; messages are sent after it is released.
///
/// ```swift
/// let server = InteractionServer(node: node, engine: InteractionEngine(model: bridge, access: acl))
/// server.setSubject(.pase, for: sessionKey)        // when PASE/CASE installs a session
/// group.addTask { await server.run() }
/// server.dataChanged()                             // after the bridge changed the model
/// ```
public final class InteractionServer<C: Clock>: Sendable where C.Duration == Duration {
    private let node: MatterUDPNode<C>
    private let clock: C
    private let engine: Mutex<InteractionEngine<C.Instant>>
    private let subjects = Mutex<[SessionKey: Subject]>([:])
    private let events: AsyncStream<ExchangeEvent>
    private let tick: Duration

    /// Subscribes to the node's IM events at once (call before the node runs).
    public init(node: MatterUDPNode<C>, clock: C, engine: InteractionEngine<C.Instant>, tick: Duration = .milliseconds(50)) {
        self.node = node
        self.clock = clock
        self.engine = Mutex(engine)
        self.tick = tick
        events = node.events(for: .interactionModel)
    }

    /// Who speaks on a session (from PASE/CASE); messages on sessions without one are dropped.
    public func setSubject(_ subject: Subject?, for session: SessionKey) {
        subjects.withLock { $0[session] = subject }
        if subject == nil { engine.withLock { $0.sessionClosed(session) } }
    }

    /// Tells the engine the data model changed (subscriptions report after their min interval).
    public func dataChanged() {
        let now = clock.now
        perform(engine.withLock { $0.dataChanged(now: now) })
    }

    /// Handles IM messages and fires timers until cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await event in events {
                    switch event {
                    case .message(let m):
                        guard let subject = subjects.withLock({ $0[m.exchange.session] }) else { continue }
                        let now = clock.now
                        perform(engine.withLock { $0.receive(m.opcode, m.payload, on: m.exchange, from: subject, now: now) })
                    case .failed(let key, _):
                        engine.withLock { $0.exchangeFailed(key) }
                    }
                }
            }
            group.addTask { [self] in
                while !Task.isCancelled {
                    try? await clock.sleep(for: tick)
                    let now = clock.now
                    perform(engine.withLock { e in
                        guard let due = e.nextDeadline, due <= now else { return [] }
                        return e.advance(to: now)
                    })
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func perform(_ effects: [InteractionEffect]) {
        for effect in effects {
            switch effect {
            case .send(let exchange, let opcode, let payload):
                try? node.send(on: exchange, opcode: opcode.rawValue, payload: payload, protocolID: .interactionModel)
            case .sendOnNewExchange(let session, let id, let opcode, let payload):
                guard let exchange = try? node.newExchange(on: session, protocolID: .interactionModel) else {
                    engine.withLock { $0.sessionClosed(session) }
                    continue
                }
                engine.withLock { $0.reportExchangeOpened(exchange, subscriptionID: id) }
                try? node.send(on: exchange, opcode: opcode.rawValue, payload: payload, protocolID: .interactionModel)
            case .close(let exchange):
                node.close(exchange)
            }
        }
    }
}

extension InteractionServer where C == ContinuousClock {
    public convenience init(node: MatterUDPNode<ContinuousClock>, engine: InteractionEngine<ContinuousClock.Instant>) {
        self.init(node: node, clock: ContinuousClock(), engine: engine)
    }
}
