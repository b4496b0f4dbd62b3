import MatterTLV
import Testing

@Suite struct EncodingTests {
    @Test(arguments: [
        (Int64(Int8.min), "00 80"), (Int64(Int8.max), "00 7f"), (Int64(Int8.min) - 1, "01 7f ff"),
        (Int64(Int16.max), "01 ff 7f"), (Int64(Int16.max) + 1, "02 00 80 00 00"),
        (Int64(Int32.min), "02 00 00 00 80"), (Int64(Int32.min) - 1, "03 ff ff ff 7f ff ff ff ff"),
        (Int64.min, "03 00 00 00 00 00 00 00 80"), (Int64.max, "03 ff ff ff ff ff ff ff 7f"),
    ])
    func signedIntegersUseTheSmallestWidth(value: Int64, bytes: String) throws {
        #expect(try TLVElement(.signed(value)).encoded() == hex(bytes))
        #expect(try TLVElement(decoding: hex(bytes)).int() == value)
    }

    @Test(arguments: [
        (UInt64(0xFF), "04 ff"), (UInt64(0x100), "05 00 01"), (UInt64(0xFFFF), "05 ff ff"),
        (UInt64(0x10000), "06 00 00 01 00"), (UInt64(0xFFFF_FFFF), "06 ff ff ff ff"),
        (UInt64(0x1_0000_0000), "07 00 00 00 00 01 00 00 00"), (UInt64.max, "07 ff ff ff ff ff ff ff ff"),
    ])
    func unsignedIntegersUseTheSmallestWidth(value: UInt64, bytes: String) throws {
        #expect(try TLVElement(.unsigned(value)).encoded() == hex(bytes))
        #expect(try TLVElement(decoding: hex(bytes)).uint() == value)
    }

    @Test func wideEncodingsDecodeButAreNotCanonical() throws {
        // 42 in a 4-byte field: a valid encoding, not the canonical one.
        let wide = hex("06 2a 00 00 00")
        #expect(try TLVElement(decoding: wide).uint() == 42)
        #expect(throws: TLVError.self) { try TLVElement(decodingCanonical: wide) }
        // A 1-byte string in a 2-byte length field.
        let wideString = hex("0d 01 00 41")
        #expect(try TLVElement(decoding: wideString).string() == "A")
        #expect(throws: TLVError.self) { try TLVElement(decodingCanonical: wideString) }
        // Common profile tag 1 written in 4 bytes.
        #expect(try TLVElement(decoding: hex("64 01 00 00 00 2a")).tag == .commonProfile(1))
    }

    @Test func stringLengthFieldsGrowWithThePayload() throws {
        let long = [UInt8](repeating: 0xAB, count: 300)
        let encoded = try TLVElement(.context(7), .bytes(long)).encoded()
        #expect(Array(encoded.prefix(4)) == [0x31, 7, 0x2C, 0x01])  // octet string, 2-byte length 300
        #expect(try TLVElement(decoding: encoded).bytes() == long)
        let huge = [UInt8](repeating: 0x41, count: 70_000)
        let s = String(decoding: huge, as: UTF8.self)
        let e = try TLVElement(.anonymous, .utf8(s)).encoded()
        #expect(e[0] == 0x0E)  // 4-byte length
        #expect(try TLVElement(decoding: e).string() == s)
    }

    @Test func canonicalOrderSortsStructureMembers() throws {
        let messy = TLVElement.structure([
            TLVElement(.fullyQualified(vendorID: 1, profile: 2, tag: 3), .null),
            TLVElement(.implicitProfile(5), .null),
            TLVElement(.context(9), .null),
            TLVElement(.commonProfile(2), .null),
            TLVElement(.context(1), .list([TLVElement(.context(3), .null), TLVElement(.context(2), .null)])),
        ])
        #expect(!messy.hasCanonicalOrder)
        let sorted = messy.canonicallyOrdered()
        #expect(sorted.hasCanonicalOrder)
        #expect(sorted.members?.map(\.tag) == [.context(1), .context(9), .commonProfile(2), .implicitProfile(5),
                                                .fullyQualified(vendorID: 1, profile: 2, tag: 3)])
        // Lists keep their order.
        #expect(sorted[context: 1]?.members?.map(\.tag) == [.context(3), .context(2)])
        #expect(throws: TLVError.self) { try TLVElement(decodingCanonical: messy.encoded()) }
        #expect(try TLVElement(decodingCanonical: sorted.encoded()) == sorted)
    }

    @Test func writerBuildsNestedContainers() throws {
        var w = TLVWriter()
        try w.structure(.anonymous) { w throws(TLVError) in
            try w.put(.context(0), unsigned: 1)
            try w.array(.context(1)) { w throws(TLVError) in
                try w.put(.anonymous, string: "a")
                try w.put(.anonymous, bool: true)
            }
            try w.putNull(.context(2))
            try w.put(.context(3), float: 1.5)
        }
        let bytes = try w.finish()
        let e = try TLVElement(decoding: bytes)
        #expect(try e.member(.context(0)).uint(as: UInt8.self) == 1)
        #expect(e[context: 1]?.members?.count == 2)
        #expect(e[context: 2]?.isNull == true)
        #expect(try e.member(.context(3)).double() == 1.5)
        #expect(try e.encoded() == bytes)
    }

    @Test func writerRefusesBrokenContainers() throws {
        var w = TLVWriter()
        try w.startStructure(.anonymous)
        #expect(throws: TLVError.self) { try w.put(.anonymous, unsigned: 1) }
        try w.put(.context(1), unsigned: 1)
        #expect(throws: TLVError.self) { try w.put(.context(1), unsigned: 2) }
        #expect(throws: TLVError.self) { try w.finish() }
        try w.startArray(.context(2))
        #expect(throws: TLVError.self) { try w.put(.context(3), unsigned: 1) }
        try w.endContainer()
        try w.endContainer()
        #expect(throws: TLVError.self) { try w.endContainer() }
        _ = try w.finish()
    }

    @Test func typedAccessorsRefuseTheWrongType() throws {
        let e = TLVElement.structure([TLVElement(.context(0), .unsigned(300)), TLVElement(.context(1), .signed(-1))])
        #expect(throws: TLVError.self) { try e.member(.context(0)).int() }
        #expect(throws: TLVError.self) { try e.member(.context(0)).uint(as: UInt8.self) }
        #expect(throws: TLVError.self) { try e.member(.context(2)) }
        #expect(try e.member(.context(1)).int(as: Int8.self) == -1)
        do {
            _ = try e.member(.context(9))
        } catch {
            #expect(error.code == .missingMember)
        }
    }

    @Test func streamingReaderYieldsTokens() throws {
        var r = try TLVReader(hex("15 20 00 2a 36 01 00 05 18 18"))
        var tokens: [TLVToken] = []
        while let t = try r.next() { tokens.append(t) }
        #expect(tokens == [.start(.anonymous, .structure), .scalar(.context(0), .signed(42)),
                           .start(.context(1), .array), .scalar(.anonymous, .signed(5)), .end, .end])
        var skip = try TLVReader(hex("15 36 01 00 05 15 18 18 24 02 07 18"))
        _ = try skip.next()
        _ = try skip.next()  // start of array 1
        try skip.skipContainer()
        #expect(try skip.next() == .scalar(.context(2), .unsigned(7)))
    }

    @Test func sequencesOfTopLevelElements() throws {
        let seq = try TLVElement.decodeSequence(hex("04 01 24 02 03 15 18"))
        #expect(seq.count == 3)
        #expect(throws: TLVError.self) { try TLVElement(decoding: hex("04 01 04 02")) }
    }
}
