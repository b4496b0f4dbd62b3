import HomeModel
import MatterInteraction
import MatterMessaging
import MatterTLV
import Synchronization
import Testing

/// Events (Matter Core Specification 7.14, 8.4.3.2, 8.5; EventPathIB 10.6.8, EventFilterIB
/// 10.6.6, EventReportIB/EventDataIB 10.6.7/10.6.9): the codecs, the event log's numbers, and
/// the engine's Read and Subscribe with event paths.
@Suite struct EventTests {
    static let switchCluster: UInt32 = 0x003B
    static let booleanState: UInt32 = 0x0045

    /// Adds a Switch (endpoint 6, InitialPress/ShortRelease/… in its EventList) to the harness's node.
    func withButton(_ h: Harness) throws {
        h.values.set(6, Self.switchCluster, 0, .int(2))
        h.values.set(6, Self.switchCluster, 1, .int(0))
        h.node.addEndpoint(6, deviceTypes: [DeviceTypeEntry(0x000F, revision: 3), .bridgedNode], parent: 1, clusters: [
            try CatalogCluster(trait: Self.switchCluster, source: h.values, events: [1, 2, 3, 4, 6], featureMap: 0b11110),
        ])
    }

    @discardableResult
    func press(_ h: Harness, _ event: UInt32, endpoint: UInt16 = 6, cluster: UInt32 = switchCluster) -> EventRecord {
        h.node.emit(endpoint: endpoint, cluster: cluster, event: event, epochTimestampMs: 1_790_000_000_000 + UInt64(event),
                    data: .structure([TLVElement(.context(0), .unsigned(1))]))
    }

    /// The EventReportIBs of the ReportData messages sent.
    func eventReports(_ effects: [InteractionEffect]) throws -> [TLVElement] {
        try sent(effects).filter { $0.0 == .reportData }.flatMap { try ReportDataMessage(decoding: $0.1).eventReports ?? [] }
    }

    /// The events (EventData) reported.
    func events(_ effects: [InteractionEffect]) throws -> [EventRecord] {
        try eventReports(effects).filter { $0[context: 1] != nil }.map { try EventReport(tlv: $0).record }
    }

    /// The event statuses (EventStatus) reported.
    func statuses(_ effects: [InteractionEffect]) throws -> [EventStatus] {
        try eventReports(effects).filter { $0[context: 0] != nil }.map { try EventStatus(report: $0) }
    }

    // MARK: Codecs

    @Test func eventReport_encodesEventDataIBWithPathNumberPriorityEpochTimestampAndData() throws {
        let r = EventRecord(endpoint: 6, cluster: 0x3B, event: 1, number: 4242, priority: .info, epochTimestampMs: 1_790_000_000_123,
                            data: .structure([TLVElement(.context(0), .unsigned(1))]))
        let tlv = EventReport(r).tlv()
        // EventReportIB: EventData at tag 1 (no EventStatus); EventDataIB's tags 0, 1, 2, 3, 7.
        let data = try tlv.member(.context(1))
        #expect(tlv.members?.count == 1)
        #expect(data.members?.map(\.tag) == [.context(0), .context(1), .context(2), .context(3), .context(7)])
        guard case .list(let path) = try data.member(.context(0)).value else { Issue.record("the path is not a list"); return }
        #expect(path == [TLVElement(.context(1), .unsigned(6)), TLVElement(.context(2), .unsigned(0x3B)), TLVElement(.context(3), .unsigned(1))])
        #expect(try data.member(.context(1)).value == .unsigned(4242))
        #expect(try data.member(.context(2)).value == .unsigned(1))
        #expect(try data.member(.context(3)).value == .unsigned(1_790_000_000_123))
        #expect(try EventReport(tlv: TLVElement(decoding: tlv.encoded())).record == r)
        // In a ReportData, at tag 2, after a round trip.
        let message = try ReportDataMessage(decoding: ReportDataMessage(subscriptionID: 9, eventReports: [tlv]).encoded())
        #expect(try message.eventReports?.map { try EventReport(tlv: $0).record } == [r])
    }

    @Test func eventReport_refusesAWildcardPathOrAnUnknownPriority() throws {
        let bad: TLVElement = .structure([TLVElement(.context(1), .structure([
            EventPath(endpoint: 6, cluster: 0x3B).tlv(.context(0)), TLVElement(.context(1), .unsigned(1)),
            TLVElement(.context(2), .unsigned(1)), TLVElement(.context(3), .unsigned(5)), TLVElement(.context(7), .structure([])),
        ]))])
        #expect(throws: TLVError.self) { try EventReport(tlv: bad) }
        let priority: TLVElement = .structure([TLVElement(.context(1), .structure([
            EventPath(endpoint: 6, cluster: 0x3B, event: 1).tlv(.context(0)), TLVElement(.context(1), .unsigned(1)),
            TLVElement(.context(2), .unsigned(9)), TLVElement(.context(3), .unsigned(5)), TLVElement(.context(7), .structure([])),
        ]))])
        #expect(throws: TLVError.self) { try EventReport(tlv: priority) }
    }

    @Test func eventPathsAndFilters_roundTripInReadAndSubscribeRequests() throws {
        let paths = [EventPath(), EventPath(endpoint: 6), EventPath(cluster: 0x3B, event: 1, isUrgent: true)]
        let filters = [EventFilter(eventMin: 77)]
        let read = try ReadRequestMessage(decoding: ReadRequestMessage(eventRequests: paths, eventFilters: filters).encoded())
        #expect(read.eventRequests == paths && read.eventFilters == filters)
        let sub = try SubscribeRequestMessage(decoding: SubscribeRequestMessage(
            minIntervalFloor: 0, maxIntervalCeiling: 5, eventRequests: paths, eventFilters: filters).encoded())
        #expect(sub.eventRequests == paths && sub.eventFilters == filters)
    }

    // MARK: The log

    @Test func eventLog_numbersIncrease_theOldestGoBeyondCapacity() {
        let log = EventLog(capacity: 3)
        let numbers = (0..<5).map { i in
            log.record(endpoint: 1, cluster: 2, event: 3, priority: .info, epochTimestampMs: UInt64(i), data: .structure([])).number
        }
        #expect(numbers == [1, 2, 3, 4, 5])
        #expect(log.events(from: 0).map(\.number) == [3, 4, 5])
        #expect(log.events(from: 5).map(\.number) == [5])
        #expect(log.nextNumber == 6)
    }

    @Test func eventLog_storesItsBoundBeforeUsingANumber_andARestartContinuesAboveEveryUsedNumber() {
        let stored = Mutex<[UInt64]>([])
        func run(from bound: UInt64, events: Int) -> [UInt64] {
            let log = EventLog(block: 10)
            log.persist(start: bound) { b in stored.withLock { $0.append(b) } }
            return (0..<events).map { _ in
                let n = log.record(endpoint: 1, cluster: 2, event: 3, priority: .info, epochTimestampMs: 0, data: .structure([])).number
                // The stored bound always covers the number handed out.
                #expect(n < stored.withLock { $0.last ?? 0 })
                return n
            }
        }
        let first = run(from: 0, events: 12)
        #expect(first == Array(1...12))
        #expect(stored.withLock { $0 } == [11, 21])
        // A restart (or kill -9) resumes at the stored bound: above everything used before.
        let second = run(from: stored.withLock { $0.last! }, events: 3)
        #expect(second == [21, 22, 23])
        #expect(second.min()! > first.max()!)
    }

    // MARK: Read

    @Test func read_wildcardAndConcreteEventPaths_withEventMin() throws {
        var h = try Harness()
        try withButton(h)
        let a = press(h, 1)
        let b = press(h, 3)
        let c = press(h, 0, endpoint: 3, cluster: Self.booleanState)
        func read(_ paths: [EventPath], min: UInt64? = nil) throws -> [EventRecord] {
            try events(h.send(ReadRequestMessage(eventRequests: paths, eventFilters: min.map { [EventFilter(eventMin: $0)] }), on: h.exchange()))
        }
        #expect(try read([EventPath()]) == [a, b, c])
        #expect(try read([EventPath(endpoint: 6)]) == [a, b])
        #expect(try read([EventPath(cluster: Self.booleanState)]) == [c])
        #expect(try read([EventPath(endpoint: 6, cluster: Self.switchCluster, event: 3)]) == [b])
        #expect(try read([EventPath(endpoint: 6), EventPath(event: 3)]) == [a, b])  // each event once
        #expect(try read([EventPath()], min: b.number) == [b, c])
        #expect(try read([EventPath(endpoint: 9)]).isEmpty)
        #expect(a.number < b.number && b.number < c.number)
        #expect(a.priority == .info && a.epochTimestampMs == 1_790_000_000_001)
    }

    @Test func read_concretePathsThatDoNotExist_getEventStatuses_wildcardsDoNot() throws {
        let hidden = AccessCheck { _, path, _ in path.endpoint != 2 }
        var h = try Harness(access: hidden)
        try withButton(h)
        let a = press(h, 1)
        let effects = try h.send(ReadRequestMessage(eventRequests: [
            EventPath(endpoint: 9, cluster: Self.switchCluster, event: 1),   // no such endpoint
            EventPath(endpoint: 6, cluster: 0x0006, event: 0),               // no On/Off there
            EventPath(endpoint: 2, cluster: 0x0006, event: 0),               // not viewable
            EventPath(endpoint: 6, cluster: Self.switchCluster, event: 5),   // not in its EventList
            EventPath(endpoint: 6, cluster: Self.switchCluster, event: 1),   // fine
            EventPath(endpoint: 9), EventPath(cluster: 0x0006),              // wildcards: nothing, silently
        ]), on: h.exchange())
        #expect(try statuses(effects).map(\.status.status) == [.unsupportedEndpoint, .unsupportedCluster, .unsupportedAccess, .unsupportedEvent])
        #expect(try statuses(effects).first?.path == EventPath(endpoint: 9, cluster: Self.switchCluster, event: 1))
        #expect(try events(effects) == [a])
        // The EventStatus encoding: EventReportIB tag 0 → { path (list) at 0, StatusIB at 1 }.
        let report = EventStatus(path: EventPath(endpoint: 9, cluster: 6, event: 0), status: StatusIB(.unsupportedEndpoint)).report()
        #expect(try EventStatus(report: TLVElement(decoding: report.encoded())).status.status == .unsupportedEndpoint)
        #expect(report[context: 0]?.members?.map(\.tag) == [.context(0), .context(1)])
    }

    @Test func read_attributesAndEventsTogether_inOneReport() throws {
        var h = try Harness()
        try withButton(h)
        let a = press(h, 1)
        let effects = try h.send(ReadRequestMessage(attributeRequests: [AttributePath(endpoint: 6, cluster: Self.switchCluster, attribute: 1)],
                                                    eventRequests: [EventPath(endpoint: 6)]), on: h.exchange())
        let report = try only(effects, ReportDataMessage.self)
        #expect(report.data[ConcreteAttributePath(endpoint: 6, cluster: Self.switchCluster, attribute: 1)] == TLVElement(.unsigned(0)))
        #expect(try events(effects) == [a])
        #expect(report.suppressResponse == true)
    }

    @Test func read_eventsOfAClusterTheSubjectMayNotView_areLeftOut() throws {
        let hidden = AccessCheck { _, path, _ in path.endpoint != 6 }
        var h = try Harness(access: hidden)
        try withButton(h)
        press(h, 1)
        let c = press(h, 0, endpoint: 3, cluster: Self.booleanState)
        #expect(try events(h.send(ReadRequestMessage(eventRequests: [EventPath()]), on: h.exchange())) == [c])
    }

    @Test func read_manyEvents_areChunked() throws {
        var h = try Harness(maxPayload: 200)
        try withButton(h)
        let all = (0..<20).map { _ in press(h, 1) }
        let ex = h.exchange()
        var got: [EventRecord] = []
        var effects = try h.send(ReadRequestMessage(eventRequests: [EventPath()]), on: ex)
        for _ in 0..<30 {
            let message = try only(effects, ReportDataMessage.self)
            #expect(try message.encoded().count <= 200)
            got += try events(effects)
            if message.moreChunkedMessages != true { break }
            effects = try h.send(StatusResponseMessage(.success), on: ex)
        }
        #expect(got == all)
    }

    @Test func eventList_listsTheClusterEvents_andAttributeListNamesIt() throws {
        var h = try Harness()
        try withButton(h)
        let read = try only(h.send(ReadRequestMessage(attributeRequests: [
            AttributePath(endpoint: 6, cluster: Self.switchCluster, attribute: 0xFFFA),
            AttributePath(endpoint: 6, cluster: Self.switchCluster, attribute: 0xFFFB),
            AttributePath(endpoint: 2, cluster: 6, attribute: 0xFFFA),
        ]), on: h.exchange()), ReportDataMessage.self)
        func ids(_ e: UInt16, _ c: UInt32, _ a: UInt32) -> [UInt64]? {
            guard case .array(let items)? = read.data[ConcreteAttributePath(endpoint: e, cluster: c, attribute: a)]?.value else { return nil }
            return items.compactMap { if case .unsigned(let u) = $0.value { u } else { nil } }
        }
        #expect(ids(6, Self.switchCluster, 0xFFFA) == [1, 2, 3, 4, 6])
        #expect(ids(6, Self.switchCluster, 0xFFFB)?.contains(0xFFFA) == true)
        #expect(ids(2, 6, 0xFFFA) == [])
    }

    // MARK: Subscribe

    /// An event subscription, primed; returns its ID and the priming events.
    func subscribe(_ h: inout Harness, _ paths: [EventPath], min: UInt16 = 2, eventMin: UInt64? = nil) throws -> (UInt32, [EventRecord]) {
        let ex = h.exchange()
        let priming = try h.send(SubscribeRequestMessage(minIntervalFloor: min, maxIntervalCeiling: Swift.max(30, min), eventRequests: paths,
                                                         eventFilters: eventMin.map { [EventFilter(eventMin: $0)] }), on: ex)
        let id = try #require(try only(priming, ReportDataMessage.self).subscriptionID)
        _ = try only(try h.send(StatusResponseMessage(.success), on: ex), SubscribeResponseMessage.self)
        return (id, try events(priming))
    }

    @Test func subscribe_primesWithKeptEventsFromEventMin_thenReportsEachNewEventOnce() throws {
        var h = try Harness()
        try withButton(h)
        let old = press(h, 1)
        let older = press(h, 3)
        let (id, primed) = try subscribe(&h, [EventPath(endpoint: 6, cluster: Self.switchCluster)], eventMin: older.number)
        #expect(primed == [older])
        #expect(old.number < older.number)

        let next = press(h, 2)
        #expect(h.engine.dataChanged(now: h.now).isEmpty)  // waits for the min interval
        let effects = h.advance(.seconds(2))
        guard case .sendOnNewExchange(_, id, .reportData, _)? = effects.first else { Issue.record("no report: \(effects)"); return }
        #expect(try events(effects) == [next])
        let reportExchange = ExchangeKey(session: h.session, exchangeID: 900, weInitiated: true)
        h.engine.reportExchangeOpened(reportExchange, subscriptionID: id)
        _ = try h.send(StatusResponseMessage(.success), on: reportExchange)
        // Nothing new: the next report (the keep-alive) carries no event again.
        #expect(h.engine.dataChanged(now: h.now).isEmpty)
        let keepAlive = h.advance(.seconds(30))
        #expect(!keepAlive.isEmpty)
        #expect(try events(keepAlive).isEmpty)
    }

    @Test func subscribe_otherClustersEvents_doNotTriggerAReport() throws {
        var h = try Harness()
        try withButton(h)
        _ = try subscribe(&h, [EventPath(endpoint: 6)], min: 0)
        press(h, 0, endpoint: 3, cluster: Self.booleanState)
        #expect(h.engine.dataChanged(now: h.now).isEmpty)
        #expect(h.advance(.seconds(1)).isEmpty)
    }

    @Test func subscribe_anUrgentEventPath_reportsWithoutWaitingForTheMinInterval() throws {
        var h = try Harness()
        try withButton(h)
        let (id, primed) = try subscribe(&h, [EventPath(endpoint: 6, cluster: Self.switchCluster, isUrgent: true)], min: 60)
        #expect(primed.isEmpty)
        let e = press(h, 1)
        let effects = h.engine.dataChanged(now: h.now)
        guard case .sendOnNewExchange(_, id, .reportData, _)? = effects.first else { Issue.record("no urgent report: \(effects)"); return }
        #expect(try events(effects) == [e])
    }
}
