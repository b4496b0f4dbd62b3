/// A Matter setup passcode (Core Specification 5.1.7.1): 27 bits, 1…99999998, never one of the
/// trivial values (00000000, 11111111 … 99999999, 12345678, 87654321).
public struct SetupPasscode: Hashable, Sendable, CustomStringConvertible {
    /// The passcode as a number.
    public let value: UInt32

    /// The values the specification forbids although they are in range.
    public static let trivialValues: Set<UInt32> = [
        0, 11_111_111, 22_222_222, 33_333_333, 44_444_444, 55_555_555,
        66_666_666, 77_777_777, 88_888_888, 99_999_999, 12_345_678, 87_654_321,
    ]

    /// Validates `value`.
    /// - Throws: `MatterSecurityError` (invalid passcode) when out of range or trivial.
    public init(_ value: UInt32) throws(MatterSecurityError) {
        guard Self.isValid(value) else {
            throw .invalidPasscode("setup passcode \(value) is out of range 1…99999998 or trivial")
        }
        self.value = value
    }

    /// Whether `value` may be used as a setup passcode.
    public static func isValid(_ value: UInt32) -> Bool {
        value >= 1 && value <= 99_999_998 && !trivialValues.contains(value)
    }

    /// A random valid passcode from `generator`.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> SetupPasscode {
        while true {  // 12 forbidden values among ~10^8: more than one draw is rare
            let candidate = UInt32.random(in: 1...99_999_998, using: &generator)
            if let passcode = try? SetupPasscode(candidate) { return passcode }
        }
    }

    /// A random valid passcode from the system generator.
    public static func random() -> SetupPasscode {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// Eight digits, zero-padded.
    public var description: String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}

/// The 12-bit discriminator a commissionable device advertises (5.1.1.5); its upper four bits
/// are the short discriminator carried by the manual pairing code.
public struct Discriminator: Hashable, Sendable {
    /// 0…4095.
    public let value: UInt16

    /// - Throws: `MatterSecurityError` when `value` does not fit in 12 bits.
    public init(_ value: UInt16) throws(MatterSecurityError) {
        guard value <= 0xFFF else { throw .invalidDiscriminator("discriminator \(value) does not fit in 12 bits") }
        self.value = value
    }

    /// The upper four bits (what an 11-digit code carries).
    public var short: UInt8 { UInt8(value >> 8) }
}
