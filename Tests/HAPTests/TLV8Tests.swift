import HAP
import Testing

/// A small deterministic generator (SplitMix64), so every failing case can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct TLV8Tests {
    @Test func shortItems_encodeAsTypeLengthValue() throws {
        let tlv = TLV8([(.state, [1]), (.method, [0]), (.separator, [])])
        #expect(tlv.encoded() == [0x06, 1, 1, 0x00, 1, 0, 0xFF, 0])
        #expect(try TLV8(decoding: tlv.encoded()) == tlv)
    }

    @Test func longValue_isFragmentedAt255AndJoinedBack() throws {
        let key = (0..<384).map { UInt8($0 & 0xFF) }
        let tlv = TLV8([(.publicKey, key), (.salt, [9, 9])])
        let bytes = tlv.encoded()
        #expect(bytes.count == 384 + 2 * 2 + 2 + 2)
        #expect(Array(bytes[0..<2]) == [0x03, 255])
        #expect(Array(bytes[257..<259]) == [0x03, 129])
        let back = try TLV8(decoding: bytes)
        #expect(back[.publicKey] == key)
        #expect(back[.salt] == [9, 9])
    }

    @Test func exactly255Bytes_isOneFragment() throws {
        let v = [UInt8](repeating: 7, count: 255)
        let bytes = TLV8([(.encryptedData, v), (.state, [5])]).encoded()
        #expect(bytes.count == 257 + 3)
        #expect(try TLV8(decoding: bytes)[.encryptedData] == v)
    }

    /// Property: any list of items (adjacent items of one type kept apart by a separator, as the
    /// spec requires) survives encode → decode.
    @Test(arguments: [1, 2, 3, 4]) func randomItems_roundTrip(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        for _ in 0..<250 {
            var items: [(TLV8.Kind, [UInt8])] = []
            for _ in 0..<Int.random(in: 0...8, using: &rng) {
                var kind = TLV8.Kind(rawValue: UInt8.random(in: 0...0xFE, using: &rng))
                if let last = items.last?.0, last == kind { kind = TLV8.Kind(rawValue: kind.rawValue &+ 1 == 0xFF ? 0 : kind.rawValue &+ 1) }
                let length = [0, 1, 2, 254, 255, 256, 510, 511, 700].randomElement(using: &rng)!
                items.append((kind, (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }))
            }
            let tlv = TLV8(items)
            #expect(try TLV8(decoding: tlv.encoded()) == tlv)
        }
    }

    @Test func truncatedInput_throws() {
        #expect(throws: TLV8.DecodingError.self) { try TLV8(decoding: [0x06]) }
        #expect(throws: TLV8.DecodingError.self) { try TLV8(decoding: [0x06, 5, 1, 2]) }
    }

    /// Fuzz: random bytes either decode to items whose re-encoding decodes to the same, or throw;
    /// nothing traps.
    @Test func randomBytes_neverTrap() {
        var rng = SeededRandom(state: 0xF00D)
        var decoded = 0
        for _ in 0..<5000 {
            let bytes = (0..<Int.random(in: 0...600, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if let tlv = try? TLV8(decoding: bytes) {
                decoded += 1
                #expect((try? TLV8(decoding: tlv.encoded())) == tlv)
            }
        }
        #expect(decoded > 0)
    }

    @Test func groups_splitAtSeparators() {
        let tlv = TLV8([(.identifier, [1]), (.permissions, [1]), (.separator, []), (.identifier, [2]), (.permissions, [0])])
        let groups = tlv.groups()
        #expect(groups.count == 2)
        #expect(groups[1][.identifier] == [2])
    }
}
