/// The `MT:` onboarding QR payload (Core Specification 5.1.3): 88 bits packed least
/// significant bit first, Base38-encoded, optionally followed by TLV extension data.
///
/// ```swift
/// let qr = QRCodePayload(vendorID: 0xFFF1, productID: 0x8000, discoveryCapabilities: .ble,
///                        discriminator: try Discriminator(3840), passcode: try SetupPasscode(20202021))
/// qr.string   // "MT:Y.K9042C00KA0648G00"
/// ```
public struct QRCodePayload: Hashable, Sendable {
    /// How the device enters commissioning mode (5.1.3.1, Table 38).
    public enum CommissioningFlow: UInt8, Sendable {
        case standard = 0, userIntent = 1, custom = 2
    }

    /// Where a commissioner may find the device.
    public struct DiscoveryCapabilities: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let softAP = DiscoveryCapabilities(rawValue: 1 << 0)
        public static let ble = DiscoveryCapabilities(rawValue: 1 << 1)
        public static let onNetwork = DiscoveryCapabilities(rawValue: 1 << 2)
    }

    public static let prefix = "MT:"

    public var vendorID: UInt16
    public var productID: UInt16
    public var commissioningFlow: CommissioningFlow
    public var discoveryCapabilities: DiscoveryCapabilities
    public var discriminator: Discriminator
    public var passcode: SetupPasscode
    /// Optional vendor TLV data after the fixed 88 bits, kept as bytes.
    public var extensionData: [UInt8]

    public init(
        vendorID: UInt16, productID: UInt16, commissioningFlow: CommissioningFlow = .standard,
        discoveryCapabilities: DiscoveryCapabilities, discriminator: Discriminator, passcode: SetupPasscode,
        extensionData: [UInt8] = []
    ) {
        self.vendorID = vendorID
        self.productID = productID
        self.commissioningFlow = commissioningFlow
        self.discoveryCapabilities = discoveryCapabilities
        self.discriminator = discriminator
        self.passcode = passcode
        self.extensionData = extensionData
    }

    // (width in bits) version 3, vendor 16, product 16, flow 2, capabilities 8,
    // discriminator 12, passcode 27, padding 4.
    private static let totalBytes = 11

    /// The payload as `MT:` + Base38.
    public var string: String {
        var bits = BitPacker()
        bits.append(0, width: 3)
        bits.append(UInt64(vendorID), width: 16)
        bits.append(UInt64(productID), width: 16)
        bits.append(UInt64(commissioningFlow.rawValue), width: 2)
        bits.append(UInt64(discoveryCapabilities.rawValue), width: 8)
        bits.append(UInt64(discriminator.value), width: 12)
        bits.append(UInt64(passcode.value), width: 27)
        bits.append(0, width: 4)
        return Self.prefix + Base38.encode(bits.bytes + extensionData)
    }

    /// The manual pairing code for the same device (21 digits when the flow is not standard).
    public var manualPairingCode: ManualPairingCode {
        let long = commissioningFlow != .standard
        return ManualPairingCode(
            passcode: passcode, discriminator: discriminator,
            vendorID: long ? vendorID : nil, productID: long ? productID : nil)
    }

    /// Parses an `MT:` payload.
    /// - Throws: `MatterSecurityError` for a missing prefix, bad Base38, a short payload, an
    ///   unknown version or flow, or an invalid passcode.
    public init(parsing text: String) throws(MatterSecurityError) {
        guard text.hasPrefix(Self.prefix) else { throw .invalidPayload("QR payload does not start with MT:") }
        let body = text.dropFirst(Self.prefix.count)
        guard !body.contains("*") else { throw .invalidPayload("concatenated QR payloads are not supported") }
        let bytes = try Base38.decode(body)
        guard bytes.count >= Self.totalBytes else { throw .invalidPayload("QR payload is \(bytes.count) bytes; 11 expected") }
        var reader = BitReader(bytes: Array(bytes[0..<Self.totalBytes]))
        let version = reader.read(3)
        guard version == 0 else { throw .invalidPayload("QR payload version \(version) is unknown") }
        vendorID = UInt16(reader.read(16))
        productID = UInt16(reader.read(16))
        let flow = UInt8(reader.read(2))
        guard let commissioningFlow = CommissioningFlow(rawValue: flow) else {
            throw .invalidPayload("QR payload commissioning flow \(flow) is reserved")
        }
        self.commissioningFlow = commissioningFlow
        discoveryCapabilities = DiscoveryCapabilities(rawValue: UInt8(reader.read(8)))
        discriminator = try Discriminator(UInt16(reader.read(12)))
        passcode = try SetupPasscode(UInt32(reader.read(27)))
        guard reader.read(4) == 0 else { throw .invalidPayload("QR payload padding bits are not zero") }
        extensionData = Array(bytes[Self.totalBytes...])
    }
}

private struct BitPacker {
    var bytes: [UInt8] = []
    var count = 0

    mutating func append(_ value: UInt64, width: Int) {
        for bit in 0..<width {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> UInt64(bit)) & 1 == 1 { bytes[count / 8] |= 1 << UInt8(count % 8) }
            count += 1
        }
    }
}

private struct BitReader {
    let bytes: [UInt8]
    var position = 0

    mutating func read(_ width: Int) -> UInt64 {
        var value: UInt64 = 0
        for bit in 0..<width {
            let p = position + bit
            if (bytes[p / 8] >> UInt8(p % 8)) & 1 == 1 { value |= 1 << UInt64(bit) }
        }
        position += width
        return value
    }
}
