public import MatterMessaging
import MatterTLV

/// What the IM engine asks its owner to do.
public enum InteractionEffect: Sendable, Equatable {
    /// Send an IM message on an exchange (reliably).
    case send(ExchangeKey, InteractionOpcode, [UInt8])
    /// Open a new exchange on the session and send this message on it (a subscription's
    /// report); then tell the engine the exchange with `reportExchangeOpened(_:subscriptionID:)`.
    case sendOnNewExchange(SessionKey, subscriptionID: UInt32, InteractionOpcode, [UInt8])
    /// The exchange is done (any pending ack goes out; a reliable message in flight keeps
    /// being retransmitted until acked).
    case close(ExchangeKey)
}

/// Limits of the IM engine.
public struct InteractionConfiguration: Sendable {
    /// The largest IM payload over UDP: the IPv6 minimum MTU (1280) less the IPv6 and UDP
    /// headers (48), the largest message header (24), a protocol header with an ack (10) and
    /// the MIC (16).
    public static let udpMaxPayload = 1280 - 48 - 24 - 10 - 16
    /// The largest IM payload (ReportData chunks are cut to it).
    public var maxPayload: Int
    /// Subscriptions held at most (more get RESOURCE_EXHAUSTED).
    public var maxSubscriptions: Int

    public init(maxPayload: Int = udpMaxPayload, maxSubscriptions: Int = 32) {
        self.maxPayload = maxPayload
        self.maxSubscriptions = maxSubscriptions
    }
}

/// The Interaction Model server as a pure state machine (Matter Core Specification chapter 8,
/// messages of chapter 10): Read (wildcards, global attributes, chunking), Write, Invoke,
/// timed interactions and Subscribe (priming, reports after the min interval when data
/// versions change, empty keep-alive reports at the max interval).
///
/// Nothing here does I/O or reads a clock: every input takes `now` and returns effects.
/// `nextDeadline` says when `advance(to:)` must be called; `dataChanged(now:)` after the data
/// model changed. `InteractionServer` owns one over a `MatterUDPNode`; tests drive it directly.
public struct InteractionEngine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public let model: any MatterDataModel
    public let access: any AccessChecker
    public let configuration: InteractionConfiguration
    private var contexts: [ExchangeKey: ExchangeContext<Instant>] = [:]
    private var subscriptions: [UInt32: Subscription<Instant>] = [:]
    private var nextSubscriptionID: UInt32

    /// - Parameter subscriptionIDSeed: the first subscription ID (production passes a random one).
    public init(model: any MatterDataModel, access: any AccessChecker, configuration: InteractionConfiguration = InteractionConfiguration(),
                subscriptionIDSeed: UInt32 = UInt32.random(in: 1...0x7FFF_FFFF)) {
        self.model = model
        self.access = access
        self.configuration = configuration
        nextSubscriptionID = subscriptionIDSeed
    }

    /// The live subscriptions' IDs (for diagnostics and tests).
    public var subscriptionIDs: [UInt32] { subscriptions.keys.sorted() }

    // MARK: Receiving

    /// Handles one IM message from `subject` on an exchange.
    public mutating func receive(_ opcode: UInt8, _ payload: [UInt8], on exchange: ExchangeKey, from subject: Subject,
                                 now: Instant) -> [InteractionEffect] {
        guard let op = InteractionOpcode(rawValue: opcode) else { return fail(exchange, .invalidAction) }
        let context = contexts.removeValue(forKey: exchange)
        var timed = false
        if case .timed(let deadline) = context {
            guard op == .writeRequest || op == .invokeRequest else { return fail(exchange, .invalidAction) }
            guard now <= deadline else { return fail(exchange, .timeout) }
            timed = true
        }
        do throws(TLVError) {
            switch op {
            case .statusResponse:
                return statusResponse(try StatusResponseMessage(decoding: payload).status, context, on: exchange, now: now)
            case .readRequest:
                return read(try ReadRequestMessage(decoding: payload), on: exchange, from: subject)
            case .subscribeRequest:
                return subscribe(try SubscribeRequestMessage(decoding: payload), on: exchange, from: subject, now: now)
            case .writeRequest:
                let effects = write(try WriteRequestMessage(decoding: payload), on: exchange, from: subject, timed: timed)
                return effects + dataChanged(now: now)
            case .invokeRequest:
                let effects = invoke(try InvokeRequestMessage(decoding: payload), on: exchange, from: subject, timed: timed)
                return effects + dataChanged(now: now)
            case .timedRequest:
                let request = try TimedRequestMessage(decoding: payload)
                contexts[exchange] = .timed(deadline: now.advanced(by: .milliseconds(Int64(request.timeout))))
                return [send(exchange, StatusResponseMessage(.success))]
            case .subscribeResponse, .reportData, .writeResponse, .invokeResponse:
                return fail(exchange, .invalidAction)
            }
        } catch {
            return fail(exchange, .invalidAction)
        }
    }

    /// An exchange failed (its message was never acknowledged) or the peer closed it: the
    /// subscription it served ends.
    public mutating func exchangeFailed(_ exchange: ExchangeKey) {
        guard let context = contexts.removeValue(forKey: exchange) else { return }
        if let id = context.subscriptionID { subscriptions[id] = nil }
    }

    /// The session ended: its subscriptions and exchanges go.
    public mutating func sessionClosed(_ session: SessionKey) {
        subscriptions = subscriptions.filter { $0.value.session != session }
        contexts = contexts.filter { $0.key.session != session }
    }

    /// Binds the exchange the owner opened for a `.sendOnNewExchange` report.
    public mutating func reportExchangeOpened(_ exchange: ExchangeKey, subscriptionID: UInt32) {
        guard let pending = subscriptions[subscriptionID]?.pendingChunks else { return }
        contexts[exchange] = .reportChunks(subscriptionID: subscriptionID, remaining: pending)
        subscriptions[subscriptionID]?.pendingChunks = nil
    }

    // MARK: Time and changes

    /// The earliest instant at which `advance(to:)` has something to do.
    public var nextDeadline: Instant? {
        subscriptions.values.compactMap { $0.due }.min()
    }

    /// Sends the reports that are due: changes after the min interval, keep-alives at the max.
    public mutating func advance(to now: Instant) -> [InteractionEffect] {
        var effects: [InteractionEffect] = []
        for id in subscriptions.keys.sorted() {
            guard let s = subscriptions[id], let due = s.due, due <= now else { continue }
            effects += report(id, now: now)
        }
        return effects
    }

    /// The data model changed: subscriptions whose clusters' data versions moved report once
    /// their min interval has passed.
    public mutating func dataChanged(now: Instant) -> [InteractionEffect] {
        for (id, s) in subscriptions where s.active {
            let reader = AttributeReader(model: model, access: access, subject: s.subject)
            if reader.clusterVersions(for: s.paths) != s.versions { subscriptions[id]?.dirty = true }
            let fresh = reader.events(for: s.eventPaths, from: s.nextEvent)
            if !fresh.isEmpty {
                subscriptions[id]?.dirty = true
                // An urgent event path (10.6.8) is reported without waiting for the min interval.
                if fresh.contains(where: { r in s.eventPaths.contains { $0.isUrgent == true && r.matches($0) } }) {
                    subscriptions[id]?.urgent = true
                }
            }
        }
        return advance(to: now)
    }

    // MARK: Read

    private mutating func read(_ request: ReadRequestMessage, on exchange: ExchangeKey, from subject: Subject) -> [InteractionEffect] {
        let reader = AttributeReader(model: model, access: access, subject: subject)
        let reports = reader.reports(for: request.attributeRequests ?? [], filters: request.dataVersionFilters ?? [])
        let events = reader.events(for: request.eventRequests ?? [], from: Self.eventMin(request.eventFilters))
        let chunks = ReportChunker(maxPayload: configuration.maxPayload).chunks(
            reports, events: events, statuses: reader.eventStatuses(for: request.eventRequests ?? []))
        return sendChunk(chunks, on: exchange, subscriptionID: nil) { .readChunks(remaining: $0) }
    }

    /// The EventMin of a request's filters (10.6.6; 0 without one).
    static func eventMin(_ filters: [EventFilter]?) -> UInt64 { filters?.map(\.eventMin).max() ?? 0 }

    /// Sends the first chunk; with more to come, waits for the StatusResponse in `waiting`.
    private mutating func sendChunk(_ chunks: [ReportChunk], on exchange: ExchangeKey, subscriptionID: UInt32?,
                                    waiting: ([ReportChunk]) -> ExchangeContext<Instant>) -> [InteractionEffect] {
        let rest = Array(chunks.dropFirst())
        let isRead = subscriptionID == nil
        let first = chunks.first ?? ReportChunk()
        let message = ReportDataMessage(subscriptionID: subscriptionID, attributeReports: first.attributes,
                                        eventReports: first.eventReports,
                                        moreChunkedMessages: rest.isEmpty ? nil : true,
                                        suppressResponse: isRead && rest.isEmpty ? true : nil)
        var effects = [send(exchange, message)]
        if isRead && rest.isEmpty {
            effects.append(.close(exchange))
        } else {
            contexts[exchange] = waiting(rest)
        }
        return effects
    }

    private mutating func statusResponse(_ status: InteractionStatus, _ context: ExchangeContext<Instant>?, on exchange: ExchangeKey,
                                         now: Instant) -> [InteractionEffect] {
        guard let context else { return [.close(exchange)] }
        guard status == .success else {
            if let id = context.subscriptionID { subscriptions[id] = nil }
            return [.close(exchange)]
        }
        switch context {
        case .timed:
            return fail(exchange, .invalidAction)
        case .readChunks(let remaining):
            return sendChunk(remaining, on: exchange, subscriptionID: nil) { .readChunks(remaining: $0) }
        case .primingChunks(let id, let remaining):
            guard var s = subscriptions[id] else { return fail(exchange, .invalidSubscription) }
            if !remaining.isEmpty {
                return sendChunk(remaining, on: exchange, subscriptionID: id) { .primingChunks(subscriptionID: id, remaining: $0) }
            }
            s.active = true
            s.lastReport = now
            subscriptions[id] = s
            return [send(exchange, SubscribeResponseMessage(subscriptionID: id, maxInterval: s.maxIntervalSeconds)), .close(exchange)]
        case .reportChunks(let id, let remaining):
            guard subscriptions[id] != nil else { return fail(exchange, .invalidSubscription) }
            if !remaining.isEmpty {
                return sendChunk(remaining, on: exchange, subscriptionID: id) { .reportChunks(subscriptionID: id, remaining: $0) }
            }
            subscriptions[id]?.inFlight = false
            return [.close(exchange)]
        }
    }

    // MARK: Subscribe

    private mutating func subscribe(_ request: SubscribeRequestMessage, on exchange: ExchangeKey, from subject: Subject,
                                    now: Instant) -> [InteractionEffect] {
        let paths = request.attributeRequests ?? []
        let eventPaths = request.eventRequests ?? []
        guard !paths.isEmpty || !eventPaths.isEmpty, request.minIntervalFloor <= request.maxIntervalCeiling else {
            return fail(exchange, .invalidAction)
        }
        if !request.keepSubscriptions {
            subscriptions = subscriptions.filter { $0.value.subject != subject }
        }
        guard subscriptions.count < configuration.maxSubscriptions else { return fail(exchange, .resourceExhausted) }
        let id = nextSubscriptionID
        nextSubscriptionID = nextSubscriptionID == UInt32.max ? 1 : nextSubscriptionID + 1
        let reader = AttributeReader(model: model, access: access, subject: subject)
        // MinIntervalFloor ≤ MaxInterval ≤ max(60 min, MaxIntervalCeiling) (8.5.1): the ceiling itself.
        let maxInterval = request.maxIntervalCeiling
        let eventMin = Self.eventMin(request.eventFilters)
        let events = reader.events(for: eventPaths, from: eventMin)
        // Every kept event has now been considered: later reports start after the newest.
        let considered = max(eventMin, (model.events(from: 0).last?.number).map { $0 &+ 1 } ?? 0)
        subscriptions[id] = Subscription(
            id: id, session: exchange.session, subject: subject, paths: paths, eventPaths: eventPaths, nextEvent: considered,
            minInterval: .seconds(Int64(request.minIntervalFloor)), maxInterval: .seconds(Int64(maxInterval)),
            maxIntervalSeconds: maxInterval, versions: reader.clusterVersions(for: paths), lastReport: now)
        let reports = reader.reports(for: paths, filters: request.dataVersionFilters ?? [])
        let chunks = ReportChunker(maxPayload: configuration.maxPayload).chunks(
            reports, events: events, statuses: reader.eventStatuses(for: eventPaths))
        return sendChunk(chunks, on: exchange, subscriptionID: id) { .primingChunks(subscriptionID: id, remaining: $0) }
    }

    /// A report for a subscription on a new exchange: the attributes of clusters whose data
    /// version changed, or an empty keep-alive.
    private mutating func report(_ id: UInt32, now: Instant) -> [InteractionEffect] {
        guard var s = subscriptions[id] else { return [] }
        let reader = AttributeReader(model: model, access: access, subject: s.subject)
        let current = reader.clusterVersions(for: s.paths)
        let changed = Set(current.filter { s.versions[$0.key] != $0.value }.keys)
        var reports: [AttributeReport] = []
        if !changed.isEmpty {
            let narrowed = s.paths.flatMap { path in
                changed.sorted().filter { c in
                    (path.endpoint ?? c.endpoint) == c.endpoint && (path.cluster ?? c.cluster) == c.cluster
                }.map { c in AttributePath(endpoint: c.endpoint, cluster: c.cluster, attribute: path.attribute) }
            }
            reports = reader.reports(for: narrowed)
        }
        let events = reader.events(for: s.eventPaths, from: s.nextEvent)
        if let last = events.last { s.nextEvent = last.number &+ 1 }
        if reports.isEmpty && events.isEmpty && now < s.lastReport.advanced(by: s.maxInterval) {
            s.versions = current
            s.dirty = false
            s.urgent = false
            subscriptions[id] = s
            return []
        }
        var chunks = ReportChunker(maxPayload: configuration.maxPayload).chunks(reports, events: events)
        let first = chunks.removeFirst()
        s.versions = current
        s.dirty = false
        s.urgent = false
        s.inFlight = true
        s.lastReport = now
        s.pendingChunks = chunks
        subscriptions[id] = s
        let message = ReportDataMessage(subscriptionID: id, attributeReports: first.attributes.isEmpty ? nil : first.attributes,
                                        eventReports: first.eventReports,
                                        moreChunkedMessages: chunks.isEmpty ? nil : true)
        guard let payload = try? message.encoded() else { return [] }
        return [.sendOnNewExchange(s.session, subscriptionID: id, .reportData, payload)]
    }

    // MARK: Write

    private mutating func write(_ request: WriteRequestMessage, on exchange: ExchangeKey, from subject: Subject, timed: Bool) -> [InteractionEffect] {
        guard request.timedRequest == timed else { return fail(exchange, .timedRequestMismatch) }
        let reader = AttributeReader(model: model, access: access, subject: subject)
        var statuses: [AttributeStatus] = []
        for item in request.writeRequests {
            guard let e = item.path.endpoint, let c = item.path.cluster, let a = item.path.attribute else {
                return fail(exchange, .invalidAction)
            }
            let p = ConcreteAttributePath(endpoint: e, cluster: c, attribute: a)
            let info = model.clusterInfo(p.clusterPath)
            let privilege = info?.writePrivileges[a] ?? .operate
            var status: StatusIB
            if let refused = reader.existence(p, privilege: privilege) {
                status = StatusIB(refused)
            } else if let info, !info.writableAttributes.contains(a) {
                status = StatusIB(.unsupportedWrite)
            } else if let info, info.timedWriteAttributes.contains(a), !timed {
                status = StatusIB(.needsTimedInteraction)
            } else if let info, let version = item.dataVersion, version != info.dataVersion {
                status = StatusIB(.dataVersionMismatch)
            } else {
                switch item.path.listIndex {
                case nil: status = model.write(p, .replace(item.data), subject: subject)
                case .append: status = model.write(p, .append(item.data), subject: subject)
                case .index: status = StatusIB(.invalidAction)
                }
            }
            statuses.append(AttributeStatus(path: AttributePath(endpoint: e, cluster: c, attribute: a, listIndex: item.path.listIndex),
                                            status: status))
        }
        if request.suppressResponse == true { return [.close(exchange)] }
        var effects = [send(exchange, WriteResponseMessage(writeResponses: statuses))]
        if request.moreChunkedMessages != true { effects.append(.close(exchange)) }
        return effects
    }

    // MARK: Invoke

    private mutating func invoke(_ request: InvokeRequestMessage, on exchange: ExchangeKey, from subject: Subject, timed: Bool) -> [InteractionEffect] {
        guard request.timedRequest == timed else { return fail(exchange, .timedRequestMismatch) }
        var responses: [InvokeResponse] = []
        for item in request.invokeRequests {
            guard let e = item.path.endpoint else { return fail(exchange, .invalidAction) }
            let p = ConcreteCommandPath(endpoint: e, cluster: item.path.cluster, command: item.path.command)
            let result: CommandResult
            if let refused = commandRefusal(p, subject: subject, timed: timed) {
                result = .status(StatusIB(refused))
            } else {
                result = model.invoke(p, fields: item.fields, subject: subject, timed: timed)
            }
            switch result {
            case .status(let status):
                responses.append(.status(CommandStatus(path: p.path, status: status, commandRef: item.commandRef)))
            case .response(let command, let fields):
                let path = CommandPath(endpoint: e, cluster: p.cluster, command: command)
                responses.append(.command(CommandData(path: path, fields: fields, commandRef: item.commandRef)))
            }
        }
        if request.suppressResponse { return [.close(exchange)] }
        return [send(exchange, InvokeResponseMessage(invokeResponses: responses)), .close(exchange)]
    }

    private func commandRefusal(_ p: ConcreteCommandPath, subject: Subject, timed: Bool) -> InteractionStatus? {
        guard let clusters = model.clusters(on: p.endpoint) else { return .unsupportedEndpoint }
        guard clusters.contains(p.cluster), let info = model.clusterInfo(p.clusterPath) else { return .unsupportedCluster }
        guard access.allows(subject, p.clusterPath, info.invokePrivileges[p.command] ?? .operate) else { return .unsupportedAccess }
        guard info.acceptedCommands.contains(p.command) else { return .unsupportedCommand }
        if info.timedCommands.contains(p.command) && !timed { return .needsTimedInteraction }
        return nil
    }

    // MARK: Helpers

    private func send(_ exchange: ExchangeKey, _ message: some InteractionMessage) -> InteractionEffect {
        .send(exchange, type(of: message).opcode, (try? message.encoded()) ?? [])
    }

    /// A StatusResponse with this status, and the exchange closed.
    private mutating func fail(_ exchange: ExchangeKey, _ status: InteractionStatus) -> [InteractionEffect] {
        contexts[exchange] = nil
        return [send(exchange, StatusResponseMessage(status)), .close(exchange)]
    }
}

/// What an exchange waits for.
enum ExchangeContext<Instant: InstantProtocol>: Sendable {
    /// A TimedRequest was accepted: a timed Write or Invoke must follow before the deadline.
    case timed(deadline: Instant)
    /// A Read's next chunks, sent one per StatusResponse.
    case readChunks(remaining: [ReportChunk])
    /// A subscription's priming reports; after the last one's StatusResponse, the SubscribeResponse.
    case primingChunks(subscriptionID: UInt32, remaining: [ReportChunk])
    /// A report's next chunks on an exchange this node opened.
    case reportChunks(subscriptionID: UInt32, remaining: [ReportChunk])

    var subscriptionID: UInt32? {
        switch self {
        case .timed, .readChunks: return nil
        case .primingChunks(let id, _), .reportChunks(let id, _): return id
        }
    }
}

/// One subscription (8.5): what it watches, its intervals and the versions last reported.
struct Subscription<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    let id: UInt32
    let session: SessionKey
    let subject: Subject
    let paths: [AttributePath]
    let eventPaths: [EventPath]
    /// The lowest event number not yet reported (or considered) for this subscription.
    var nextEvent: UInt64
    let minInterval: Duration
    let maxInterval: Duration
    let maxIntervalSeconds: UInt16
    var versions: [ConcreteClusterPath: UInt32]
    var lastReport: Instant
    /// The SubscribeResponse went out (priming done).
    var active = false
    /// A report awaits its StatusResponse.
    var inFlight = false
    /// A watched data version changed, or a watched event happened, since the last report.
    var dirty = false
    /// The pending change includes an urgent event: report without waiting for the min interval.
    var urgent = false
    /// Chunks of a report after its first, until the owner binds the report's exchange.
    var pendingChunks: [ReportChunk]?

    init(id: UInt32, session: SessionKey, subject: Subject, paths: [AttributePath], eventPaths: [EventPath], nextEvent: UInt64,
         minInterval: Duration, maxInterval: Duration, maxIntervalSeconds: UInt16, versions: [ConcreteClusterPath: UInt32], lastReport: Instant) {
        self.id = id
        self.session = session
        self.subject = subject
        self.paths = paths
        self.eventPaths = eventPaths
        self.nextEvent = nextEvent
        self.minInterval = minInterval
        self.maxInterval = maxInterval
        self.maxIntervalSeconds = maxIntervalSeconds
        self.versions = versions
        self.lastReport = lastReport
    }

    /// When the next report is due: after the min interval if something changed, else at the max.
    var due: Instant? {
        guard active, !inFlight else { return nil }
        if dirty && urgent { return lastReport }
        return dirty ? lastReport.advanced(by: minInterval) : lastReport.advanced(by: maxInterval)
    }
}
