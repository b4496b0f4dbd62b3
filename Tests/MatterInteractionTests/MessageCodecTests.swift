import MatterInteraction
import MatterTLV
import Testing

/// The IM messages against hand-assembled encodings (Matter Core Specification 10.6/10.7 and
/// the TLV rules of Appendix A), and round trips of each message type.
@Suite struct MessageCodecTests {
    @Test func readRequest_encodesAsTheSpecLaysItOut() throws {
        let read = ReadRequestMessage(attributeRequests: [AttributePath(endpoint: 0, cluster: 0x28, attribute: 0)], isFabricFiltered: false)
        // { 0: [ [ 2: 0, 3: 0x28, 4: 0 ] ], 3: false, 0xFF: 11 }
        #expect(try read.encoded() == hex("15 36 00 17 24 02 00 24 03 28 24 04 00 18 18 28 03 24 ff 0b 18"))
        let back = try ReadRequestMessage(decoding: read.encoded())
        #expect(back == read)
    }

    @Test func statusResponse_andTimedRequest() throws {
        #expect(try StatusResponseMessage(.needsTimedInteraction).encoded() == hex("15 24 00 c6 24 ff 0b 18"))
        #expect(try TimedRequestMessage(timeout: 500).encoded() == hex("15 25 00 f4 01 24 ff 0b 18"))
        #expect(try StatusResponseMessage(decoding: hex("15 24 00 00 18")).status == .success)  // revision is optional
    }

    @Test func wildcardPath_omitsItsMembers() throws {
        let path = AttributePath(cluster: 0x1D)
        #expect(try path.tlv().encoded() == hex("17 24 03 1d 18"))
        #expect(path.isWildcard)
        #expect(try AttributePath(tlv: TLVElement(decoding: hex("17 18"))) == AttributePath())
    }

    @Test func listIndexNull_meansAppend() throws {
        let path = AttributePath(endpoint: 1, cluster: 6, attribute: 0, listIndex: .append)
        let e = path.tlv()
        #expect(try e.encoded() == hex("17 24 02 01 24 03 06 24 04 00 34 05 18"))
        #expect(try AttributePath(tlv: TLVElement(decoding: e.encoded())) == path)
    }

    @Test func reportData_withStatusAndDataAndChunkFlags() throws {
        let report = ReportDataMessage(
            subscriptionID: 0x1234_5678,
            attributeReports: [
                .data(AttributeData(path: AttributePath(endpoint: 1, cluster: 6, attribute: 0), data: TLVElement(.bool(true)), dataVersion: 7)),
                .status(AttributeStatus(path: AttributePath(endpoint: 9, cluster: 6, attribute: 0), status: StatusIB(.unsupportedEndpoint))),
            ],
            moreChunkedMessages: true, suppressResponse: false)
        let back = try ReportDataMessage(decoding: report.encoded())
        #expect(back == report)
        let raw = try TLVElement(decoding: report.encoded())
        #expect(try raw.member(.context(3)).bool() == true)
        #expect(try raw.member(.context(0xFF)).uint() == 11)
    }

    @Test func invokeRequestAndResponse_roundTrip() throws {
        let request = InvokeRequestMessage(
            invokeRequests: [CommandData(path: CommandPath(endpoint: 2, cluster: 6, command: 2), fields: .structure([]), commandRef: 1)],
            timedRequest: true)
        #expect(try InvokeRequestMessage(decoding: request.encoded()) == request)
        let response = InvokeResponseMessage(invokeResponses: [
            .status(CommandStatus(path: CommandPath(endpoint: 2, cluster: 6, command: 2), status: StatusIB(.success), commandRef: 1)),
            .command(CommandData(path: CommandPath(endpoint: 0, cluster: 0x30, command: 1),
                                 fields: .structure([TLVElement(.context(0), .unsigned(0)), TLVElement(.context(1), .utf8(""))]))),
        ])
        #expect(try InvokeResponseMessage(decoding: response.encoded()) == response)
    }

    @Test func subscribeAndWriteMessages_roundTrip() throws {
        let subscribe = SubscribeRequestMessage(
            keepSubscriptions: true, minIntervalFloor: 1, maxIntervalCeiling: 60,
            attributeRequests: [AttributePath(endpoint: 1)], eventRequests: [EventPath(endpoint: 1, isUrgent: true)],
            eventFilters: [EventFilter(eventMin: 4)], isFabricFiltered: false,
            dataVersionFilters: [DataVersionFilter(path: ClusterPath(endpoint: 1, cluster: 6), dataVersion: 42)])
        #expect(try SubscribeRequestMessage(decoding: subscribe.encoded()) == subscribe)
        let response = SubscribeResponseMessage(subscriptionID: 9, maxInterval: 60)
        #expect(try SubscribeResponseMessage(decoding: response.encoded()) == response)
        let write = WriteRequestMessage(
            writeRequests: [AttributeData(path: AttributePath(endpoint: 0, cluster: 0x28, attribute: 5), data: TLVElement(.utf8("Kitchen")))],
            timedRequest: false, suppressResponse: false)
        #expect(try WriteRequestMessage(decoding: write.encoded()) == write)
        let writeResponse = WriteResponseMessage(writeResponses: [
            AttributeStatus(path: AttributePath(endpoint: 0, cluster: 0x28, attribute: 5), status: StatusIB(.constraintError, clusterStatus: 3)),
        ])
        #expect(try WriteResponseMessage(decoding: writeResponse.encoded()) == writeResponse)
    }

    @Test func refusesMessagesMissingMandatoryMembers() {
        #expect(throws: TLVError.self) { try ReadRequestMessage(decoding: hex("15 18")) }              // no FabricFiltered
        #expect(throws: TLVError.self) { try InvokeRequestMessage(decoding: hex("15 28 00 28 01 18")) } // no InvokeRequests
        #expect(throws: TLVError.self) { try StatusResponseMessage(decoding: hex("17 24 00 00 18")) }   // a list, not a structure
        #expect(throws: TLVError.self) { try TimedRequestMessage(decoding: hex("15 24 00 01 18 00")) }  // trailing bytes
        #expect(throws: TLVError.self) { try StatusResponseMessage(decoding: hex("15 25 00 00 01 18")) } // status > UInt8
    }

    @Test func statusDescriptions_nameTheCode() {
        #expect(InteractionStatus.needsTimedInteraction.description == "NEEDS_TIMED_INTERACTION (0xc6)")
        #expect(InteractionStatus(0x42).description == "STATUS (0x42)")
    }
}
