import MatterTLV

/// Opcodes of the Secure Channel protocol (protocol ID 0x0000, Core Specification 4.11.1).
public enum SecureChannelOpcode: UInt8, Sendable {
    case messageCounterSyncRequest = 0x00
    case messageCounterSyncResponse = 0x01
    case standaloneAck = 0x10
    case pbkdfParamRequest = 0x20
    case pbkdfParamResponse = 0x21
    case pake1 = 0x22
    case pake2 = 0x23
    case pake3 = 0x24
    case sigma1 = 0x30
    case sigma2 = 0x31
    case sigma3 = 0x32
    case sigma2Resume = 0x33
    case statusReport = 0x40
    case icdCheckIn = 0x50
}

/// A message of the Secure Channel protocol a handshake wants sent: its opcode and payload.
public struct SecureChannelMessage: Hashable, Sendable {
    public var opcode: SecureChannelOpcode
    public var payload: [UInt8]

    public init(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) {
        self.opcode = opcode
        self.payload = payload
    }
}

/// A StatusReport (Core Specification Appendix D): general code, protocol, protocol-specific
/// code, optional data; little-endian.
public struct StatusReport: Hashable, Sendable {
    /// General status codes (Appendix D.3.1) used by the handshakes.
    public enum GeneralCode: UInt16, Sendable {
        case success = 0, failure = 1, badPrecondition = 2, outOfRange = 3, badRequest = 4, unsupported = 5,
            unexpected = 6, resourceExhausted = 7, busy = 8, timeout = 9, continue_ = 10, aborted = 11,
            invalidArgument = 12, notFound = 13, alreadyExists = 14, permissionDenied = 15, dataLoss = 16
    }

    /// Secure Channel protocol codes (4.11.1.4).
    public enum SecureChannelCode: UInt16, Sendable {
        case sessionEstablishmentSuccess = 0, noSharedTrustRoots = 1, invalidParameter = 2, closeSession = 3, busy = 4
    }

    public static let secureChannelProtocolID: UInt32 = 0x0000_0000

    public var generalCode: UInt16
    /// Vendor ID in the upper 16 bits, protocol in the lower.
    public var protocolID: UInt32
    public var protocolCode: UInt16
    public var data: [UInt8]

    public init(generalCode: UInt16, protocolID: UInt32, protocolCode: UInt16, data: [UInt8] = []) {
        self.generalCode = generalCode
        self.protocolID = protocolID
        self.protocolCode = protocolCode
        self.data = data
    }

    /// A Secure Channel status report.
    public init(_ general: GeneralCode, _ code: SecureChannelCode, data: [UInt8] = []) {
        self.init(generalCode: general.rawValue, protocolID: Self.secureChannelProtocolID, protocolCode: code.rawValue, data: data)
    }

    /// The report that ends a successful PASE or CASE.
    public static let sessionEstablished = StatusReport(.success, .sessionEstablishmentSuccess)
    /// The report a failed handshake sends.
    public static let invalidParameter = StatusReport(.failure, .invalidParameter)

    public var encoded: [UInt8] {
        var out: [UInt8] = []
        func le(_ v: UInt64, _ n: Int) { for i in 0..<n { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        le(UInt64(generalCode), 2)
        le(UInt64(protocolID), 4)
        le(UInt64(protocolCode), 2)
        return out + data
    }

    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        guard bytes.count >= 8 else { throw .invalidPayload("status report is \(bytes.count) bytes; at least 8 expected") }
        func le(_ at: Int, _ n: Int) -> UInt64 { (0..<n).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        generalCode = UInt16(le(0, 2))
        protocolID = UInt32(le(2, 4))
        protocolCode = UInt16(le(6, 2))
        data = Array(bytes[8...])
    }

    /// Whether this reports a successful session establishment.
    public var isSessionEstablished: Bool {
        generalCode == GeneralCode.success.rawValue && protocolID == Self.secureChannelProtocolID
            && protocolCode == SecureChannelCode.sessionEstablishmentSuccess.rawValue
    }
}

/// The session parameters a node announces in PASE and CASE (4.12.8, session-parameter-struct).
public struct SessionParameters: Hashable, Sendable {
    /// SESSION_IDLE_INTERVAL, milliseconds.
    public var idleInterval: UInt32?
    /// SESSION_ACTIVE_INTERVAL, milliseconds.
    public var activeInterval: UInt32?
    /// SESSION_ACTIVE_THRESHOLD, milliseconds.
    public var activeThreshold: UInt16?
    public var dataModelRevision: UInt16?
    public var interactionModelRevision: UInt16?
    public var specificationVersion: UInt32?
    public var maxPathsPerInvoke: UInt16?

    public init(
        idleInterval: UInt32? = nil, activeInterval: UInt32? = nil, activeThreshold: UInt16? = nil,
        dataModelRevision: UInt16? = nil, interactionModelRevision: UInt16? = nil, specificationVersion: UInt32? = nil,
        maxPathsPerInvoke: UInt16? = nil
    ) {
        self.idleInterval = idleInterval
        self.activeInterval = activeInterval
        self.activeThreshold = activeThreshold
        self.dataModelRevision = dataModelRevision
        self.interactionModelRevision = interactionModelRevision
        self.specificationVersion = specificationVersion
        self.maxPathsPerInvoke = maxPathsPerInvoke
    }

    func element(_ tag: TLVTag) -> TLVElement {
        var members: [TLVElement] = []
        func add(_ n: UInt8, _ v: (some BinaryInteger)?) { if let v { members.append(.init(.context(n), .unsigned(UInt64(v)))) } }
        add(1, idleInterval)
        add(2, activeInterval)
        add(3, activeThreshold)
        add(4, dataModelRevision)
        add(5, interactionModelRevision)
        add(6, specificationVersion)
        add(7, maxPathsPerInvoke)
        return .structure(tag, members)
    }

    init(_ element: TLVElement) throws(MatterSecurityError) {
        func u32(_ n: UInt8) throws(MatterSecurityError) -> UInt32? {
            try tlv { () throws(TLVError) in try element[context: n]?.uint(as: UInt32.self) }
        }
        func u16(_ n: UInt8) throws(MatterSecurityError) -> UInt16? {
            try tlv { () throws(TLVError) in try element[context: n]?.uint(as: UInt16.self) }
        }
        idleInterval = try u32(1)
        activeInterval = try u32(2)
        activeThreshold = try u16(3)
        dataModelRevision = try u16(4)
        interactionModelRevision = try u16(5)
        specificationVersion = try u32(6)
        maxPathsPerInvoke = try u16(7)
    }
}

/// Runs TLV reading code, turning a TLV error into a MatterSecurityError.
func tlv<T>(_ body: () throws(TLVError) -> T) throws(MatterSecurityError) -> T {
    do {
        return try body()
    } catch {
        throw .invalidPayload("malformed TLV: \(error)")
    }
}

extension TLVElement {
    /// A byte string member of exactly `length` bytes (any length when nil).
    func octets(_ n: UInt8, length: Int? = nil) throws(MatterSecurityError) -> [UInt8] {
        let value = try tlv { () throws(TLVError) in try member(.context(n)).bytes() }
        if let length, value.count != length {
            throw .invalidPayload("field \(n) is \(value.count) bytes; \(length) expected")
        }
        return value
    }

    static func decodeStructure(_ bytes: [UInt8], _ what: String) throws(MatterSecurityError) -> TLVElement {
        let element = try tlv { () throws(TLVError) in try TLVElement(decoding: bytes) }
        guard case .structure = element.value else { throw .invalidPayload("\(what) is not a TLV structure") }
        return element
    }
}
