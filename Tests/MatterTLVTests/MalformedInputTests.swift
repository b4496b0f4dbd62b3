import MatterTLV
import MatterTLVFuzz
import Testing

/// The decoder refuses every kind of bad input with an error, never a crash.
@Suite struct MalformedInputTests {
    @Test(arguments: [
        ("", TLVError.Code.truncated),
        ("19", .reservedElementType), ("1f", .reservedElementType), ("3a 01", .reservedElementType),
        ("18", .unexpectedEndOfContainer),
        ("15", .unterminatedContainer), ("15 24 00 01", .unterminatedContainer), ("16 17 18", .unterminatedContainer),
        ("01 2a", .truncated), ("03 00 00 00", .truncated), ("24", .truncated), ("c4 f1 ff ed", .truncated),
        ("0c 05 41 42", .truncated), ("10 ff", .truncated),
        ("13 ff ff ff ff ff ff ff ff", .tooLong), ("0f 00 00 00 00 01 00 00 00", .tooLong),
        ("0c 02 c3 28", .invalidUTF8), ("0c 01 ff", .invalidUTF8),
        ("15 04 01 18", .invalidTag),                 // anonymous member of a structure
        ("16 24 01 01 18", .invalidTag),              // tagged member of an array
        ("15 24 01 01 24 01 02 18", .duplicateTag),
        ("15 38 18", .invalidTag),                    // tagged end-of-container
        ("04 01 04 02", .trailingBytes),
    ])
    func refuses(_ input: String, _ code: TLVError.Code) {
        do {
            let e = try TLVElement(decoding: hex(input))
            Issue.record("decoded \(e) from \(input)")
        } catch {
            #expect(error.code == code, "\(input): \(error)")
        }
    }

    @Test func refusesNestingDeeperThanTheLimit() throws {
        let limits = TLVLimits(maxDepth: 8)
        let ok = [UInt8](repeating: 0x17, count: 8) + [UInt8](repeating: 0x18, count: 8)
        #expect(try TLVElement(decoding: ok, limits: limits).isContainer)
        let deep = [UInt8](repeating: 0x17, count: 9) + [UInt8](repeating: 0x18, count: 9)
        do {
            _ = try TLVElement(decoding: deep, limits: limits)
            Issue.record("accepted 9 levels with a limit of 8")
        } catch {
            #expect(error.code == .tooDeep)
        }
        // Very deep input never reaches the stack: refused at the default limit.
        let hostile = [UInt8](repeating: 0x16, count: 100_000)
        #expect(throws: TLVError.self) { try TLVElement(decoding: hostile) }
    }

    @Test func refusesInputLongerThanTheLimit() {
        let long = [UInt8](repeating: 0x14, count: 100)
        do {
            _ = try TLVReader(long, limits: TLVLimits(maxInputLength: 99))
            Issue.record("accepted input over the limit")
        } catch {
            #expect(error.code == .tooLong)
        }
        #expect(throws: TLVError.self) {
            try TLVElement(decoding: [0x10, 10] + [UInt8](repeating: 0, count: 10), limits: TLVLimits(maxStringLength: 9))
        }
    }

    @Test func everyTruncationOfAValidEncodingIsRefused() throws {
        let element = TLVElement.structure([
            TLVElement(.context(0), .unsigned(0x1234_5678_9ABC)),
            TLVElement(.fullyQualified(vendorID: 0xFFF1, profile: 0xDEED, tag: 0xAA55_FEED), .utf8("Tschüs")),
            TLVElement(.context(2), .array([TLVElement(.double(17.9)), TLVElement(.bytes([1, 2, 3]))])),
            TLVElement(.commonProfile(100_000), .list([TLVElement(.null), TLVElement(.context(1), .bool(true))])),
        ])
        let bytes = try element.encoded()
        for n in 0..<bytes.count {
            #expect(throws: TLVError.self) { try TLVElement(decoding: Array(bytes.prefix(n))) }
        }
        #expect(try TLVElement(decoding: bytes) == element)
    }

    /// A short run of the fuzzer (the full million runs as `matter-tlv-fuzz --count 1000000`).
    @Test func fuzz20kInputs() {
        var fuzzer = TLVFuzzer(seed: 20_251_125)
        let report = fuzzer.run(count: 20_000)
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(report.inputs == 20_000)
        // The run must exercise both paths, or it proves nothing.
        #expect(report.decoded > 2_000)
        #expect(report.refused > 2_000)
    }
}
