import MatterMessaging
import Testing

@Suite struct HeaderTests {
    @Test func messageHeaderWithEveryField() throws {
        var h = MessageHeader(sessionID: 0x1234, messageCounter: 0x0102_0304, sourceNodeID: 0x1122_3344_5566_7788,
                              destination: .node(0xAABB_CCDD_EEFF_0011))
        h.extensions = [9, 8, 7]
        h.control = true
        let bytes = h.encoded()
        // flags: version 0, S (0x04), DSIZ 1; security flags: C (0x40) | MX (0x20).
        #expect(bytes == hex("05 3412 60 04030201 8877665544332211 1100ffeeddccbbaa 0300 090807"))
        let (back, offset) = try MessageHeader.decode(bytes + [0xEE])
        #expect(back == h)
        #expect(offset == bytes.count)
    }

    @Test func groupHeader() throws {
        let h = MessageHeader(sessionID: 7, messageCounter: 1, sourceNodeID: 5, destination: .group(0xFF01), sessionType: .group)
        #expect(h.encoded() == hex("06 0700 01 01000000 0500000000000000 01ff"))
        #expect(try MessageHeader.decode(h.encoded()).0 == h)
    }

    @Test(arguments: ["", "00 0000", "10 0000 00 00000000", "03 0000 00 00000000", "04 0000 00 000000", "00 0000 03 00000000",
                      "00 0000 20 00000000 0500 01"])
    func malformedMessageHeadersAreRefused(_ input: String) {
        #expect(throws: MessagingError.self) { try MessageHeader.decode(hex(input)) }
    }

    @Test func protocolHeaderWithEveryField() throws {
        var p = ProtocolHeader(isInitiator: true, needsAck: true, ackedCounter: 0xDEAD_BEEF, opcode: 0x20, exchangeID: 0x4321,
                               protocolID: ProtocolID(vendorID: 0xFFF1, id: 0x0005))
        p.securedExtensions = [1, 2]
        // flags: I | A | R | SX | V = 0x1f
        #expect(p.encoded() == hex("1f 20 2143 f1ff 0500 efbeadde 0200 0102"))
        #expect(try ProtocolHeader.decode(p.encoded()).0 == p)
        let plain = ProtocolHeader(isInitiator: false, opcode: 0x10, exchangeID: 1, protocolID: .secureChannel)
        #expect(plain.encoded() == hex("00 10 0100 0000"))
        #expect(plain.isStandaloneAck)
        #expect(throws: MessagingError.self) { try ProtocolHeader.decode(hex("02 10 0100 0000 0102")) }
    }

    @Test func statusReportRoundTrip() throws {
        let r = StatusReport.secureChannel(.success, .sessionEstablishmentSuccess)
        #expect(r.encoded() == hex("0000 00000000 0000"))
        let busy = StatusReport(generalCode: .busy, protocolID: .secureChannel, protocolCode: 4, protocolData: [0xE8, 0x03])
        #expect(busy.encoded() == hex("0800 00000000 0400 e803"))
        #expect(try StatusReport(decoding: busy.encoded()) == busy)
        let vendor = StatusReport(generalCode: .failure, protocolID: ProtocolID(vendorID: 0xFFF1, id: 2), protocolCode: 9)
        #expect(vendor.encoded() == hex("0100 0200f1ff 0900"))
        #expect(try StatusReport(decoding: vendor.encoded()).protocolID == ProtocolID(vendorID: 0xFFF1, id: 2))
        #expect(throws: MessagingError.self) { try StatusReport(decoding: hex("0000 000000")) }
    }
}
