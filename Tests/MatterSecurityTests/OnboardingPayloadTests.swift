import Testing

@testable import MatterSecurity

@Suite struct SetupPasscodeTests {
    @Test(arguments: [0, 11_111_111, 22_222_222, 33_333_333, 44_444_444, 55_555_555, 66_666_666, 77_777_777,
                      88_888_888, 99_999_999, 12_345_678, 87_654_321, 100_000_000] as [UInt32])
    func refusesTrivialOrOutOfRange(_ value: UInt32) {
        #expect(throws: MatterSecurityError.self) { try SetupPasscode(value) }
        #expect(!SetupPasscode.isValid(value))
    }

    @Test(arguments: [1, 20_202_021, 99_999_998, 12_345_679, 11_111_112] as [UInt32])
    func acceptsValid(_ value: UInt32) throws {
        #expect(try SetupPasscode(value).value == value)
    }

    @Test func randomIsValidAndPrintsEightDigits() throws {
        var generator = SplitMix(seed: 7)
        for _ in 0..<1000 {
            let p = SetupPasscode.random(using: &generator)
            #expect(SetupPasscode.isValid(p.value))
            #expect(p.description.count == 8)
        }
        #expect(try SetupPasscode(1).description == "00000001")
    }

    @Test func discriminatorIsTwelveBits() throws {
        #expect(try Discriminator(0xFFF).short == 0xF)
        #expect(try Discriminator(3840).short == 15)
        #expect(throws: MatterSecurityError.self) { try Discriminator(0x1000) }
    }
}

@Suite struct VerhoeffTests {
    @Test func knownCheckDigits() {
        // Verhoeff's worked example: 236 → 3; the spec's manual code 3497011233 → 2.
        #expect(Verhoeff.checkDigit([2, 3, 6]) == 3)
        #expect(Verhoeff.validate([2, 3, 6, 3]))
        #expect(!Verhoeff.validate([2, 3, 6, 4]))
        #expect(Verhoeff.checkDigit([3, 4, 9, 7, 0, 1, 1, 2, 3, 3]) == 2)
    }

    @Test func detectsEverySingleDigitErrorAndAdjacentSwap() {
        let body: [UInt8] = [7, 4, 9, 7, 0, 1, 1, 2, 3, 3, 6, 5, 5, 2, 1, 3, 2, 7, 6, 8]
        let full = body + [Verhoeff.checkDigit(body)]
        #expect(Verhoeff.validate(full))
        for i in full.indices {
            for d in 0..<10 where UInt8(d) != full[i] {
                var wrong = full
                wrong[i] = UInt8(d)
                #expect(!Verhoeff.validate(wrong))
            }
            if i + 1 < full.count, full[i] != full[i + 1] {
                var swapped = full
                swapped.swapAt(i, i + 1)
                #expect(!Verhoeff.validate(swapped))
            }
        }
    }
}

@Suite struct ManualPairingCodeTests {
    @Test func specExampleShortForm() throws {
        let code = ManualPairingCode(passcode: try SetupPasscode(20_202_021), discriminator: try Discriminator(3840))
        #expect(code.digits == "34970112332")
        #expect(code.formatted == "3497-011-2332")
        let parsed = try ManualPairingCode(parsing: "3497-011-2332")
        #expect(parsed.passcode.value == 20_202_021)
        #expect(parsed.shortDiscriminator == 15)
        #expect(parsed.vendorID == nil)
    }

    @Test func specExampleLongForm() throws {
        let code = ManualPairingCode(
            passcode: try SetupPasscode(20_202_021), discriminator: try Discriminator(3840),
            vendorID: 0xFFF1, productID: 0x8000)
        #expect(code.digits == "749701123365521327687")
        let parsed = try ManualPairingCode(parsing: code.digits)
        #expect(parsed == code)
    }

    @Test(arguments: [
        ("52927623630456200032", UInt32(38_728_284), UInt8(5), UInt16(4562), UInt16(32)),
        ("40000100000000100001", 1, 0, 1, 1),
    ])
    func decodesLongCodes(body: String, passcode: UInt32, short: UInt8, vendor: UInt16, product: UInt16) throws {
        let check = Verhoeff.checkDigit(body.utf8.map { $0 - 48 })
        let parsed = try ManualPairingCode(parsing: body + String(check))
        #expect(parsed.passcode.value == passcode)
        #expect(parsed.shortDiscriminator == short)
        #expect(parsed.vendorID == vendor)
        #expect(parsed.productID == product)
        #expect(parsed.digits == body + String(check))
    }

    @Test(arguments: [
        "", "3497011233", "349701123321", "34970112333",  // lengths, wrong check digit
        "3497.011-2332", "94970112336",                    // not a digit, first digit 9
        "749701123365521327687".dropLast(10) + "0",       // long flag with short length
    ])
    func refusesMalformed(_ text: String) {
        #expect(throws: MatterSecurityError.self) { try ManualPairingCode(parsing: text) }
    }

    @Test func refusesZeroPasscodeEvenWithValidCheckDigit() {
        let body = "2327680000"
        let text = body + String(Verhoeff.checkDigit(body.utf8.map { $0 - 48 }))
        #expect(throws: MatterSecurityError.self) { try ManualPairingCode(parsing: text) }
    }

    @Test func roundTripsEveryShortDiscriminator() throws {
        var generator = SplitMix(seed: 99)
        for short in 0..<16 {
            let passcode = SetupPasscode.random(using: &generator)
            let code = ManualPairingCode(passcode: passcode, discriminator: try Discriminator(UInt16(short) << 8 | 0x5A))
            let parsed = try ManualPairingCode(parsing: code.digits)
            #expect(parsed.shortDiscriminator == UInt8(short))
            #expect(parsed.passcode == passcode)
        }
    }
}

@Suite struct QRCodePayloadTests {
    @Test func specExample() throws {
        let qr = QRCodePayload(
            vendorID: 0xFFF1, productID: 0x8000, discoveryCapabilities: .ble,
            discriminator: try Discriminator(3840), passcode: try SetupPasscode(20_202_021))
        #expect(qr.string == "MT:Y.K9042C00KA0648G00")
        let parsed = try QRCodePayload(parsing: "MT:Y.K9042C00KA0648G00")
        #expect(parsed == qr)
        #expect(parsed.manualPairingCode.digits == "34970112332")
    }

    @Test func roundTripsEveryField() throws {
        var generator = SplitMix(seed: 3)
        for _ in 0..<300 {
            let qr = QRCodePayload(
                vendorID: UInt16.random(in: 0...0xFFFF, using: &generator),
                productID: UInt16.random(in: 0...0xFFFF, using: &generator),
                commissioningFlow: QRCodePayload.CommissioningFlow(rawValue: UInt8.random(in: 0...2, using: &generator))!,
                discoveryCapabilities: .init(rawValue: UInt8.random(in: 0...7, using: &generator)),
                discriminator: try Discriminator(UInt16.random(in: 0...0xFFF, using: &generator)),
                passcode: SetupPasscode.random(using: &generator),
                extensionData: (0..<Int.random(in: 0...5, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            #expect(try QRCodePayload(parsing: qr.string) == qr)
        }
    }

    @Test func base38Lengths() throws {
        #expect(Base38.encode([]) == "")
        #expect(Base38.encode([0]) == "00")
        #expect(Base38.encode([0xFF, 0xFF, 0xFF]) == "PLS18")
        #expect(try Base38.decode("PLS18") == [0xFF, 0xFF, 0xFF])
        for n in 0..<8 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 * 37 + 200) }
            #expect(try Base38.decode(Substring(Base38.encode(bytes))) == bytes)
        }
    }

    @Test(arguments: [
        "Y.K9042C00KA0648G00",          // no prefix
        "MT:Y.K9042C00KA0648G0",        // length 19: remainder of 4 + … not a Base38 group
        "MT:Y.K9042C00KA0648",          // too short for 88 bits
        "MT:Y.K9042C00KA0648g00",       // lowercase is not Base38
        "MT:.....C00KA0648G00",         // group above 2^24
        "MT:Y.K9042C00KA0648G00*MT:Y.K9042C00KA0648G00",
    ])
    func refusesMalformed(_ text: String) {
        #expect(throws: MatterSecurityError.self) { try QRCodePayload(parsing: text) }
    }

    @Test func refusesTrivialPasscodeInPayload() {
        #expect(rawPayload(passcode: 20_202_021) == "MT:Y.K9042C00KA0648G00")  // the helper is faithful
        #expect(throws: MatterSecurityError.self) { try QRCodePayload(parsing: rawPayload(passcode: 11_111_111)) }
        #expect(throws: MatterSecurityError.self) { try QRCodePayload(parsing: rawPayload(passcode: 0)) }
    }

    /// The spec example's bits with another passcode, built without the validating initialiser.
    private func rawPayload(passcode: UInt32) -> String {
        var bits: [Bool] = []
        func put(_ v: UInt64, _ w: Int) { for i in 0..<w { bits.append((v >> UInt64(i)) & 1 == 1) } }
        put(0, 3); put(0xFFF1, 16); put(0x8000, 16); put(0, 2); put(2, 8); put(3840, 12); put(UInt64(passcode), 27); put(0, 4)
        var bytes = [UInt8](repeating: 0, count: 11)
        for (i, b) in bits.enumerated() where b { bytes[i / 8] |= 1 << UInt8(i % 8) }
        return "MT:" + Base38.encode(bytes)
    }
}

/// A small seeded generator so random round-trips are reproducible.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
