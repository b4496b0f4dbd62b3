/// The manual pairing code (Core Specification 5.1.4): 11 digits, or 21 with vendor and product
/// ID, ending in a Verhoeff check digit.
///
/// ```swift
/// let code = ManualPairingCode(passcode: try SetupPasscode(20202021), discriminator: try Discriminator(3840))
/// code.digits   // "34970112332"
/// ```
public struct ManualPairingCode: Hashable, Sendable {
    /// The setup passcode.
    public var passcode: SetupPasscode
    /// The upper four bits of the discriminator (all a manual code carries).
    public var shortDiscriminator: UInt8
    /// Present only in the 21-digit form.
    public var vendorID: UInt16?
    /// Present only in the 21-digit form.
    public var productID: UInt16?

    /// A code for a device with the given 12-bit discriminator; passing `vendorID` and
    /// `productID` makes the 21-digit form (used when the commissioning flow is not standard).
    public init(passcode: SetupPasscode, discriminator: Discriminator, vendorID: UInt16? = nil, productID: UInt16? = nil) {
        self.init(passcode: passcode, shortDiscriminator: discriminator.short, vendorID: vendorID, productID: productID)
    }

    init(passcode: SetupPasscode, shortDiscriminator: UInt8, vendorID: UInt16?, productID: UInt16?) {
        self.passcode = passcode
        self.shortDiscriminator = shortDiscriminator & 0xF
        if let vendorID, let productID {
            self.vendorID = vendorID
            self.productID = productID
        }
    }

    /// Whether this is the 21-digit form.
    public var isLong: Bool { vendorID != nil }

    /// The code as 11 or 21 decimal digits, check digit last.
    public var digits: String {
        var body = ""
        body += String((isLong ? 4 : 0) | UInt32(shortDiscriminator >> 2))
        body += Self.padded((UInt32(shortDiscriminator & 0x3) << 14) | (passcode.value & 0x3FFF), width: 5)
        body += Self.padded(passcode.value >> 14, width: 4)
        if let vendorID, let productID {
            body += Self.padded(UInt32(vendorID), width: 5) + Self.padded(UInt32(productID), width: 5)
        }
        let check = Verhoeff.checkDigit(body.utf8.map { $0 - UInt8(ascii: "0") })
        return body + String(check)
    }

    /// The 11-digit form grouped for people: `3497-011-2332`; the 21-digit form in groups of
    /// 4-3-4-5-5.
    public var formatted: String {
        let d = Array(digits)
        var out = String(d[0..<4]) + "-" + String(d[4..<7]) + "-" + String(d[7..<11])
        if d.count == 21 { out += "-" + String(d[11..<16]) + "-" + String(d[16..<21]) }
        return out
    }

    /// Parses a code; dashes and spaces are ignored.
    /// - Throws: `MatterSecurityError` for a wrong length, a non-digit, a wrong check digit,
    ///   a length that disagrees with the form flag, or an invalid passcode.
    public init(parsing text: String) throws(MatterSecurityError) {
        var digits: [UInt8] = []
        for scalar in text.unicodeScalars where scalar != "-" && scalar != " " {
            guard scalar.value >= 0x30, scalar.value <= 0x39 else {
                throw .invalidPayload("manual pairing code holds a character that is not a digit: \(scalar)")
            }
            digits.append(UInt8(scalar.value - 0x30))
        }
        guard digits.count == 11 || digits.count == 21 else {
            throw .invalidPayload("manual pairing code has \(digits.count) digits; 11 or 21 expected")
        }
        guard Verhoeff.validate(digits) else { throw .checksum("manual pairing code check digit is wrong") }
        func number(_ range: Range<Int>) -> UInt32 { digits[range].reduce(0) { $0 * 10 + UInt32($1) } }
        let first = digits[0]
        guard first <= 7 else { throw .invalidPayload("manual pairing code starts with \(first); 0…7 expected") }
        let long = first & 4 != 0
        guard long == (digits.count == 21) else {
            throw .invalidPayload("manual pairing code length \(digits.count) disagrees with its vendor/product flag")
        }
        let chunk2 = number(1..<6), chunk3 = number(6..<10)
        guard chunk2 <= 0xFFFF, chunk3 <= 0x1FFF else { throw .invalidPayload("manual pairing code field out of range") }
        let passcode = try SetupPasscode((chunk3 << 14) | (chunk2 & 0x3FFF))
        let short = UInt8((first & 3) << 2) | UInt8(chunk2 >> 14)
        var vendorID: UInt16?, productID: UInt16?
        if long {
            let v = number(10..<15), p = number(15..<20)
            guard v <= 0xFFFF, p <= 0xFFFF else { throw .invalidPayload("manual pairing code vendor or product ID out of range") }
            vendorID = UInt16(v)
            productID = UInt16(p)
        }
        self.init(passcode: passcode, shortDiscriminator: short, vendorID: vendorID, productID: productID)
    }

    private static func padded(_ value: UInt32, width: Int) -> String {
        let s = String(value)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
