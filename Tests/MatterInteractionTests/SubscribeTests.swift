import HomeModel
import MatterInteraction
import MatterMessaging
import MatterTLV
import Testing

/// Subscribe (Matter Core Specification 8.5): priming reports, SubscribeResponse, reports on
/// data version changes after the min interval, keep-alives at the max interval.
@Suite struct SubscribeTests {
    let onOff = AttributePath(endpoint: 2, cluster: 6, attribute: 0)

    /// Subscribes and completes priming; returns the subscription ID.
    func subscribe(_ h: inout Harness, min: UInt16 = 2, max: UInt16 = 10, paths: [AttributePath]? = nil,
                   filters: [DataVersionFilter]? = nil) throws -> (UInt32, ReportDataMessage) {
        let ex = h.exchange()
        let priming = try only(try h.send(SubscribeRequestMessage(minIntervalFloor: min, maxIntervalCeiling: max, attributeRequests: paths ?? [onOff],
                                                                  dataVersionFilters: filters), on: ex), ReportDataMessage.self)
        let id = try #require(priming.subscriptionID)
        #expect(priming.suppressResponse == nil)
        let done = try h.send(StatusResponseMessage(.success), on: ex)
        let response = try only(done, SubscribeResponseMessage.self)
        #expect(response.subscriptionID == id && response.maxInterval == max)
        #expect(closes(done, ex))
        return (id, priming)
    }

    @Test func priming_thenReportsOnChangeAfterTheMinInterval() throws {
        var h = try Harness()
        let (id, priming) = try subscribe(&h)
        #expect(priming.data[ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0)] == TLVElement(.bool(false)))
        #expect(h.engine.subscriptionIDs == [id])

        // A change right away waits for the min interval.
        h.values.set(2, 6, 0, .bool(true))
        h.node.markChanged(ConcreteClusterPath(endpoint: 2, cluster: 6))
        #expect(h.engine.dataChanged(now: h.now).isEmpty)
        #expect(h.advance(.milliseconds(1900)).isEmpty)
        let effects = h.advance(.milliseconds(100))
        guard case .sendOnNewExchange(let session, let sid, .reportData, let payload) = try #require(effects.first) else {
            Issue.record("no report: \(effects)"); return
        }
        #expect(session == h.session && sid == id)
        let report = try ReportDataMessage(decoding: payload)
        #expect(report.subscriptionID == id)
        #expect(report.data[ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0)] == TLVElement(.bool(true)))
        // No second report while the first awaits its StatusResponse.
        let reportExchange = ExchangeKey(session: h.session, exchangeID: 500, weInitiated: true)
        h.engine.reportExchangeOpened(reportExchange, subscriptionID: id)
        #expect(h.advance(.seconds(30)).isEmpty)
        #expect(closes(try h.send(StatusResponseMessage(.success), on: reportExchange), reportExchange))
    }

    @Test func anInvoke_triggersAReportOnceTheMinIntervalPassed() throws {
        var h = try Harness()
        let (id, _) = try subscribe(&h, min: 0, max: 60)
        let effects = try h.send(InvokeRequestMessage(invokeRequests: [
            CommandData(path: CommandPath(endpoint: 2, cluster: 6, command: 1), fields: .structure([])),
        ]), on: h.exchange())
        let reports = effects.compactMap { e -> ReportDataMessage? in
            if case .sendOnNewExchange(_, id, .reportData, let p) = e { return try? ReportDataMessage(decoding: p) } else { return nil }
        }
        #expect(reports.count == 1)
        #expect(reports.first?.data[ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0)] == TLVElement(.bool(true)))
    }

    @Test func keepAlive_isAnEmptyReportAtTheMaxInterval() throws {
        var h = try Harness()
        let (id, _) = try subscribe(&h, min: 1, max: 10)
        #expect(h.advance(.milliseconds(9999)).isEmpty)
        let effects = h.advance(.milliseconds(1))
        guard case .sendOnNewExchange(_, id, .reportData, let payload) = try #require(effects.first) else { Issue.record("\(effects)"); return }
        let report = try ReportDataMessage(decoding: payload)
        #expect(report.subscriptionID == id && (report.attributeReports ?? []).isEmpty)
        #expect(h.engine.nextDeadline == nil)  // waiting for the StatusResponse
    }

    @Test func aFailedReportExchange_endsTheSubscription() throws {
        var h = try Harness()
        let (id, _) = try subscribe(&h, min: 1, max: 5)
        _ = h.advance(.seconds(5))
        let ex = ExchangeKey(session: h.session, exchangeID: 77, weInitiated: true)
        h.engine.reportExchangeOpened(ex, subscriptionID: id)
        h.engine.exchangeFailed(ex)
        #expect(h.engine.subscriptionIDs.isEmpty)
    }

    @Test func aNewSubscriptionWithoutKeep_replacesTheSubjectsOld_andSessionCloseEndsAll() throws {
        var h = try Harness()
        let (first, _) = try subscribe(&h)
        let (second, _) = try subscribe(&h)
        #expect(h.engine.subscriptionIDs == [second])
        #expect(first != second)
        h.engine.sessionClosed(h.session)
        #expect(h.engine.subscriptionIDs.isEmpty)
    }

    @Test func dataVersionFilter_leavesTheClusterOutOfPriming() throws {
        var h = try Harness()
        let version = try #require(h.node.clusterInfo(ConcreteClusterPath(endpoint: 2, cluster: 6))?.dataVersion)
        let (_, priming) = try subscribe(&h, paths: [AttributePath(endpoint: 2)],
                                         filters: [DataVersionFilter(path: ClusterPath(endpoint: 2, cluster: 6), dataVersion: version)])
        #expect(!priming.data.keys.contains { $0.cluster == 6 })
        #expect(priming.data.keys.contains { $0.cluster == 0x39 })
    }

    @Test func minAboveMax_isInvalidAction() throws {
        var h = try Harness()
        let effects = try h.send(SubscribeRequestMessage(minIntervalFloor: 10, maxIntervalCeiling: 5, attributeRequests: [onOff]), on: h.exchange())
        #expect(try only(effects, StatusResponseMessage.self).status == .invalidAction)
    }
}
