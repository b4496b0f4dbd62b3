import MatterInteraction
import MatterTLV
import Testing

/// Read (Matter Core Specification 8.4.3.2, 8.9): concrete and wildcard paths, global
/// attributes, error statuses, access, data version filters and chunking.
@Suite struct ReadTests {
    @Test func concreteRead_ofBasicInformation() throws {
        var h = try Harness()
        let ex = h.exchange()
        let effects = try h.send(ReadRequestMessage(attributeRequests: [AttributePath(endpoint: 0, cluster: 0x28, attribute: 1)]), on: ex)
        let report = try only(effects, ReportDataMessage.self)
        #expect(report.data[ConcreteAttributePath(endpoint: 0, cluster: 0x28, attribute: 1)] == TLVElement(.utf8("Hearth")))
        #expect(report.suppressResponse == true && report.moreChunkedMessages == nil)
        #expect(closes(effects, ex))
    }

    @Test func wildcardDescriptorRead_listsTheBridgeTree() throws {
        var h = try Harness()
        let report = try h.readAll([AttributePath(cluster: 0x1D)]).report
        func parts(_ e: UInt16) -> [UInt64]? {
            report.data[ConcreteAttributePath(endpoint: e, cluster: 0x1D, attribute: 3)]?.members?.compactMap { try? $0.uint() }
        }
        #expect(parts(0) == [1, 2, 3, 4, 5])
        #expect(parts(1) == [2, 3, 4, 5])
        #expect(parts(2) == [])
        let servers = report.data[ConcreteAttributePath(endpoint: 2, cluster: 0x1D, attribute: 1)]?.members?.compactMap { try? $0.uint() }
        #expect(servers == [0x06, 0x1D, 0x39])
        let types = try #require(report.data[ConcreteAttributePath(endpoint: 2, cluster: 0x1D, attribute: 0)]?.members)
        #expect(try types.map { try $0.member(.context(0)).uint() } == [0x0100, 0x0013])
        // Every endpoint's Descriptor, all its attributes and the global ones.
        #expect(report.data.count == 6 * (4 + 6))
    }

    @Test func globalAttributes_comeFromTheCatalogue() throws {
        var h = try Harness()
        let report = try only(try h.send(ReadRequestMessage(attributeRequests: [AttributePath(endpoint: 2, cluster: 6)]), on: h.exchange()),
                              ReportDataMessage.self)
        func ids(_ a: UInt32) -> [UInt64]? { report.data[ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: a)]?.members?.compactMap { try? $0.uint() } }
        #expect(ids(0xFFF9) == [0, 1, 2])
        #expect(ids(0xFFF8) == [])
        #expect(ids(0xFFFB) == [0, 0xFFF8, 0xFFF9, 0xFFFA, 0xFFFB, 0xFFFC, 0xFFFD])
        #expect(try report.data[ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0xFFFD)]?.uint() == 6)  // On/Off rev 6 in the catalogue
        #expect(report.data[ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0)] == TLVElement(.bool(false)))
        // Data versions ride on every data report.
        for case .data(let d) in report.attributeReports ?? [] { #expect(d.dataVersion != nil) }
    }

    @Test(arguments: [
        (AttributePath(endpoint: 9, cluster: 6, attribute: 0), InteractionStatus.unsupportedEndpoint),
        (AttributePath(endpoint: 2, cluster: 8, attribute: 0), .unsupportedCluster),
        (AttributePath(endpoint: 2, cluster: 6, attribute: 0x4000), .unsupportedAttribute),
    ])
    func concretePathsThatDoNotExist_getStatuses(_ path: AttributePath, _ status: InteractionStatus) throws {
        var h = try Harness()
        let report = try only(try h.send(ReadRequestMessage(attributeRequests: [path]), on: h.exchange()), ReportDataMessage.self)
        #expect(report.statuses == [AttributeStatus(path: path, status: StatusIB(status))])
    }

    @Test func wildcardsSkipWhatDoesNotExist() throws {
        var h = try Harness()
        let report = try only(try h.send(ReadRequestMessage(attributeRequests: [AttributePath(cluster: 6, attribute: 0)]), on: h.exchange()),
                              ReportDataMessage.self)
        #expect(report.statuses.isEmpty)
        #expect(Array(report.data.keys) == [ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0)])
    }

    @Test func accessChecker_refusesConcreteAndHidesWildcard() throws {
        let noBridged = AccessCheck { _, path, _ in path.endpoint == 0 }
        var h = try Harness(access: noBridged)
        let concrete = AttributePath(endpoint: 2, cluster: 6, attribute: 0)
        let report = try only(try h.send(ReadRequestMessage(attributeRequests: [concrete, AttributePath(cluster: 0x1D)]), on: h.exchange()),
                              ReportDataMessage.self)
        #expect(report.statuses == [AttributeStatus(path: concrete, status: StatusIB(.unsupportedAccess))])
        #expect(Set(report.data.keys.map(\.endpoint)) == [0])
    }

    @Test func dataVersionFilter_skipsAClusterTheClientHas() throws {
        var h = try Harness()
        let first = try only(try h.send(ReadRequestMessage(attributeRequests: [AttributePath(endpoint: 2, cluster: 6, attribute: 0)]), on: h.exchange()),
                             ReportDataMessage.self)
        guard case .data(let d) = try #require(first.attributeReports?.first) else { Issue.record("no data"); return }
        let filter = DataVersionFilter(path: ClusterPath(endpoint: 2, cluster: 6), dataVersion: try #require(d.dataVersion))
        let again = try only(try h.send(ReadRequestMessage(attributeRequests: [AttributePath(endpoint: 2)], dataVersionFilters: [filter]),
                                        on: h.exchange()), ReportDataMessage.self)
        #expect(!again.data.keys.contains { $0.cluster == 6 })
        #expect(again.data.keys.contains { $0.cluster == 0x39 })
    }

    @Test func largeReads_areChunkedToTheMessageSize_andWaitForStatusResponses() throws {
        var whole = try Harness()
        let (all, wholeChunks) = try whole.readAll([AttributePath()])
        #expect(wholeChunks >= 2)  // even at the UDP size, everything takes more than one message

        var h = try Harness(maxPayload: 160)
        let ex = h.exchange()
        var effects = try h.send(ReadRequestMessage(attributeRequests: [AttributePath()]), on: ex)
        var collected: [AttributeReport] = []
        var chunks = 0
        while chunks < 500 {
            let report = try only(effects, ReportDataMessage.self)
            #expect(try report.encoded().count <= 160)
            collected += report.attributeReports ?? []
            chunks += 1
            if report.moreChunkedMessages != true {
                #expect(report.suppressResponse == true)
                #expect(closes(effects, ex))
                break
            }
            #expect(!closes(effects, ex))
            effects = try h.send(StatusResponseMessage(.success), on: ex)
        }
        #expect(chunks > 5)
        // The PartsList of the root (a list) may have been split into appends; the rest is identical.
        let plain = collected.filter { if case .data(let d) = $0 { d.path.listIndex == nil } else { true } }
        #expect(ReportDataMessage(attributeReports: plain).data.count == all.data.count)
        #expect(ReportDataMessage(attributeReports: plain).data.keys.sorted() == all.data.keys.sorted())
    }

    @Test func aListTooLargeForOneMessage_isSentAsAnEmptyListAndAppends() throws {
        var h = try Harness(maxPayload: 55)
        let ex = h.exchange()
        var effects = try h.send(ReadRequestMessage(attributeRequests: [AttributePath(endpoint: 0, cluster: 0x1D, attribute: 3)]), on: ex)
        var items: [UInt64] = []
        var sawEmpty = false
        for _ in 0..<20 {
            let report = try only(effects, ReportDataMessage.self)
            for case .data(let d) in report.attributeReports ?? [] {
                if d.path.listIndex == .append { items.append(try d.data.uint()) } else { sawEmpty = d.data.members?.isEmpty == true }
            }
            if report.moreChunkedMessages != true { break }
            effects = try h.send(StatusResponseMessage(.success), on: ex)
        }
        #expect(sawEmpty)
        #expect(items == [1, 2, 3, 4, 5])
    }

    @Test func malformedRequests_getInvalidAction() throws {
        var h = try Harness()
        let ex = h.exchange()
        let effects = h.engine.receive(InteractionOpcode.readRequest.rawValue, [0x15, 0x36], on: ex, from: .pase, now: h.now)
        #expect(try only(effects, StatusResponseMessage.self).status == .invalidAction)
        #expect(closes(effects, ex))
        let unknown = h.engine.receive(0x42, [], on: h.exchange(), from: .pase, now: h.now)
        #expect(try only(unknown, StatusResponseMessage.self).status == .invalidAction)
    }
}
