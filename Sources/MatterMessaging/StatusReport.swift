/// A Status Report message of the Secure Channel protocol (Matter Core Specification,
/// Appendix D): general code, protocol ID, protocol-specific code and optional data, all
/// little-endian.
public struct StatusReport: Hashable, Sendable {
    /// General status codes (D.2).
    public struct GeneralCode: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let success = GeneralCode(rawValue: 0)
        public static let failure = GeneralCode(rawValue: 1)
        public static let badPrecondition = GeneralCode(rawValue: 2)
        public static let outOfRange = GeneralCode(rawValue: 3)
        public static let badRequest = GeneralCode(rawValue: 4)
        public static let unsupported = GeneralCode(rawValue: 5)
        public static let unexpected = GeneralCode(rawValue: 6)
        public static let resourceExhausted = GeneralCode(rawValue: 7)
        public static let busy = GeneralCode(rawValue: 8)
        public static let timeout = GeneralCode(rawValue: 9)
        public static let `continue` = GeneralCode(rawValue: 10)
        public static let aborted = GeneralCode(rawValue: 11)
        public static let invalidArgument = GeneralCode(rawValue: 12)
        public static let notFound = GeneralCode(rawValue: 13)
        public static let alreadyExists = GeneralCode(rawValue: 14)
        public static let permissionDenied = GeneralCode(rawValue: 15)
        public static let dataLoss = GeneralCode(rawValue: 16)
        public static let messageTooLarge = GeneralCode(rawValue: 17)
    }

    /// Secure Channel protocol codes (4.11.1.4).
    public enum SecureChannelCode: UInt16, Sendable {
        case sessionEstablishmentSuccess = 0x0000
        case noSharedTrustRoots = 0x0001
        case invalidParameter = 0x0002
        case closeSession = 0x0003
        case busy = 0x0004
    }

    public var generalCode: GeneralCode
    public var protocolID: ProtocolID
    public var protocolCode: UInt16
    public var protocolData: [UInt8]

    public init(generalCode: GeneralCode, protocolID: ProtocolID, protocolCode: UInt16, protocolData: [UInt8] = []) {
        self.generalCode = generalCode
        self.protocolID = protocolID
        self.protocolCode = protocolCode
        self.protocolData = protocolData
    }

    /// A Secure Channel status report (e.g. SessionEstablishmentSuccess after Pake3/Sigma3).
    public static func secureChannel(_ general: GeneralCode, _ code: SecureChannelCode) -> StatusReport {
        StatusReport(generalCode: general, protocolID: .secureChannel, protocolCode: code.rawValue)
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 8 + protocolData.count)
        w.u16(generalCode.rawValue)
        w.u32(protocolID.combined)
        w.u16(protocolCode)
        w.append(protocolData)
        return w.bytes
    }

    public init(decoding bytes: [UInt8]) throws(MessagingError) {
        var r = ByteReader(bytes)
        generalCode = GeneralCode(rawValue: try r.u16("general code"))
        let pid = try r.u32("protocol ID")
        protocolID = ProtocolID(vendorID: UInt16(pid >> 16), id: UInt16(truncatingIfNeeded: pid))
        protocolCode = try r.u16("protocol code")
        protocolData = try r.take(r.remaining, "protocol data")
    }
}
