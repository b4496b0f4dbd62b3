import MatterInteraction
import MatterTLV
import Testing

/// Properties of the codecs over many seeded random inputs: random valid messages survive
/// encode→decode unchanged; random and mutated bytes never crash a decoder.
@Suite struct CodecPropertyTests {
    @Test func randomValidMessages_roundTrip() throws {
        let g = Gen(seed: 0x1A7E_2026)
        for _ in 0..<400 {
            let read = ReadRequestMessage(attributeRequests: g.maybe { g.list { g.attributePath() } },
                                          eventRequests: g.maybe { g.list { g.eventPath() } },
                                          eventFilters: g.maybe { g.list { EventFilter(eventMin: g.next(), node: g.maybe { g.next() }) } },
                                          isFabricFiltered: g.bool(),
                                          dataVersionFilters: g.maybe { g.list { g.versionFilter() } })
            #expect(try ReadRequestMessage(decoding: read.encoded()) == read)

            let report = ReportDataMessage(subscriptionID: g.maybe { g.int() }, attributeReports: g.maybe { g.list { g.report() } },
                                           moreChunkedMessages: g.maybe { g.bool() }, suppressResponse: g.maybe { g.bool() })
            #expect(try ReportDataMessage(decoding: report.encoded()) == report)

            let subscribe = SubscribeRequestMessage(keepSubscriptions: g.bool(), minIntervalFloor: g.int(), maxIntervalCeiling: g.int(),
                                                    attributeRequests: g.maybe { g.list { g.attributePath() } },
                                                    isFabricFiltered: g.bool(), dataVersionFilters: g.maybe { g.list { g.versionFilter() } })
            #expect(try SubscribeRequestMessage(decoding: subscribe.encoded()) == subscribe)

            let write = WriteRequestMessage(writeRequests: g.list { AttributeData(path: g.attributePath(), data: g.value(depth: 2),
                                                                                  dataVersion: g.maybe { g.int() }) },
                                            timedRequest: g.bool(), suppressResponse: g.maybe { g.bool() },
                                            moreChunkedMessages: g.maybe { g.bool() })
            #expect(try WriteRequestMessage(decoding: write.encoded()) == write)

            let invoke = InvokeRequestMessage(invokeRequests: g.list { g.commandData() }, timedRequest: g.bool(), suppressResponse: g.bool())
            #expect(try InvokeRequestMessage(decoding: invoke.encoded()) == invoke)

            let responses = InvokeResponseMessage(invokeResponses: g.list {
                g.bool() ? .command(g.commandData()) : .status(CommandStatus(path: g.commandPath(), status: g.status(), commandRef: g.maybe { g.int() }))
            }, suppressResponse: g.bool(), moreChunkedMessages: g.maybe { g.bool() })
            #expect(try InvokeResponseMessage(decoding: responses.encoded()) == responses)
        }
    }

    @Test func randomAndMutatedBytes_neverCrashTheDecoders() throws {
        let g = Gen(seed: 0xF022)
        var seeds: [[UInt8]] = []
        for _ in 0..<40 {
            seeds.append(try ReportDataMessage(attributeReports: g.list { g.report() }, moreChunkedMessages: true).encoded())
            seeds.append(try InvokeRequestMessage(invokeRequests: g.list { g.commandData() }).encoded())
            seeds.append(try ReadRequestMessage(attributeRequests: g.list { g.attributePath() }, isFabricFiltered: true).encoded())
            // Events: EventPathIBs and an EventFilterIB, EventReportIBs with data and with a status.
            let n = UInt64.random(in: 0...UInt64.max, using: &g.rng)
            let event = EventReport(EventRecord(endpoint: 6, cluster: 0x3B, event: 1, number: n, priority: .info, epochTimestampMs: n >> 20,
                                                data: .structure([TLVElement(.context(0), .unsigned(1))]))).tlv()
            let status = EventStatus(path: EventPath(endpoint: 9, cluster: 6, event: 0), status: StatusIB(.unsupportedEndpoint)).report()
            seeds.append(try ReadRequestMessage(eventRequests: [EventPath(endpoint: 6), EventPath(cluster: 0x3B, event: 1, isUrgent: true)],
                                                eventFilters: [EventFilter(eventMin: n)]).encoded())
            seeds.append(try ReportDataMessage(subscriptionID: 5, eventReports: [status, event]).encoded())
            seeds.append(try event.encoded())
            seeds.append(try status.encoded())
        }
        var decoded = 0, refused = 0
        for i in 0..<30_000 {
            var bytes: [UInt8]
            if i % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &g.rng)).map { _ in UInt8.random(in: 0...255, using: &g.rng) }
            } else {
                bytes = seeds[Int.random(in: 0..<seeds.count, using: &g.rng)]
                for _ in 0..<Int.random(in: 1...4, using: &g.rng) where !bytes.isEmpty {
                    let at = Int.random(in: 0..<bytes.count, using: &g.rng)
                    switch Int.random(in: 0..<3, using: &g.rng) {
                    case 0: bytes[at] = UInt8.random(in: 0...255, using: &g.rng)
                    case 1: bytes.remove(at: at)
                    default: bytes.insert(UInt8.random(in: 0...255, using: &g.rng), at: at)
                    }
                }
            }
            for decode in decoders {
                if (try? decode(bytes)) != nil { decoded += 1 } else { refused += 1 }
            }
        }
        // Both outcomes happen: the mutations are neither all harmless nor all fatal.
        #expect(decoded > 0)
        #expect(refused > decoded)
    }

    private let decoders: [([UInt8]) throws -> Any] = [
        { try StatusResponseMessage(decoding: $0) }, { try ReadRequestMessage(decoding: $0) },
        { try SubscribeRequestMessage(decoding: $0) }, { try SubscribeResponseMessage(decoding: $0) },
        { try ReportDataMessage(decoding: $0) }, { try WriteRequestMessage(decoding: $0) },
        { try WriteResponseMessage(decoding: $0) }, { try InvokeRequestMessage(decoding: $0) },
        { try InvokeResponseMessage(decoding: $0) }, { try TimedRequestMessage(decoding: $0) },
        { try EventReport(tlv: TLVElement(decoding: $0)) }, { try EventStatus(report: TLVElement(decoding: $0)) },
    ]
}

/// A seeded source of random messages (a class, so nested builder closures can share it).
final class Gen {
    var rng: SeededGenerator
    init(seed: UInt64) { rng = SeededGenerator(seed: seed) }
    func next() -> UInt64 { rng.next() }

    func bool() -> Bool { next() & 1 == 1 }
    func int<T: FixedWidthInteger & UnsignedInteger>() -> T { T.random(in: 0...T.max, using: &rng) }
    func maybe<T>(_ body: () -> T) -> T? { bool() ? body() : nil }
    func list<T>(_ body: () -> T) -> [T] { (0..<Int.random(in: 0...4, using: &rng)).map { _ in body() } }

    func attributePath() -> AttributePath {
        AttributePath(endpoint: maybe { int() }, cluster: maybe { int() }, attribute: maybe { int() }, node: maybe { next() },
                      listIndex: maybe { bool() ? .append : .index(int()) }, enableTagCompression: maybe { bool() })
    }

    func eventPath() -> EventPath {
        EventPath(endpoint: maybe { int() }, cluster: maybe { int() }, event: maybe { int() }, node: maybe { next() }, isUrgent: maybe { bool() })
    }

    func versionFilter() -> DataVersionFilter {
        DataVersionFilter(path: ClusterPath(endpoint: maybe { int() }, cluster: maybe { int() }, node: maybe { next() }), dataVersion: int())
    }

    func status() -> StatusIB { StatusIB(InteractionStatus(int()), clusterStatus: maybe { int() }) }

    func report() -> AttributeReport {
        bool() ? .data(AttributeData(path: attributePath(), data: value(depth: 2), dataVersion: maybe { int() }))
            : .status(AttributeStatus(path: attributePath(), status: status()))
    }

    func commandPath() -> CommandPath { CommandPath(endpoint: maybe { int() }, cluster: int(), command: int()) }

    func commandData() -> CommandData {
        CommandData(path: commandPath(), fields: maybe { structure(depth: 2) }, commandRef: maybe { int() })
    }

    func structure(depth: Int) -> TLVElement {
        let tags = Set((0..<Int.random(in: 0...4, using: &rng)).map { _ in UInt8.random(in: 0...254, using: &rng) })
        return .structure(tags.sorted().map { TLVElement(.context($0), value(depth: depth - 1).value) })
    }

    /// A random TLV value (anonymous), nested at most `depth` deep.
    func value(depth: Int) -> TLVElement {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 7), using: &rng) {
        case 0: return TLVElement(.unsigned(next()))
        case 1: return TLVElement(.signed(Int64(bitPattern: next())))
        case 2: return TLVElement(.bool(bool()))
        case 3: return TLVElement(.utf8(String((0..<Int.random(in: 0...8, using: &rng)).map { _ in "aé☃z".randomElement(using: &rng)! })))
        case 4: return TLVElement(.bytes((0..<Int.random(in: 0...8, using: &rng)).map { _ in int() }))
        case 5: return TLVElement(.null)
        case 6: return TLVElement(.double(Double(Int32.random(in: -1000...1000, using: &rng)) / 8))
        case 7: return structure(depth: depth)
        default: return .array(list { value(depth: depth - 1) })
        }
    }
}
