/// A protocol: vendor ID (0 for the Matter standard) and protocol ID (4.4.3.4).
public struct ProtocolID: Hashable, Sendable, CustomStringConvertible {
    public var vendorID: UInt16
    public var id: UInt16

    public init(vendorID: UInt16 = 0, id: UInt16) {
        self.vendorID = vendorID
        self.id = id
    }

    public static let secureChannel = ProtocolID(id: 0x0000)
    public static let interactionModel = ProtocolID(id: 0x0001)
    public static let bdx = ProtocolID(id: 0x0002)
    public static let userDirectedCommissioning = ProtocolID(id: 0x0003)

    /// The 32-bit form used in a status report: vendor ID in the upper 16 bits.
    public var combined: UInt32 { UInt32(vendorID) << 16 | UInt32(id) }

    public var description: String { vendorID == 0 ? format4(id) : "\(format4(vendorID)):\(format4(id))" }
}

private func format4(_ v: UInt16) -> String {
    let s = String(v, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 4 - s.count)) + s
}

/// Secure Channel protocol opcodes (4.11.1 / Table "Secure Channel Protocol Opcodes").
public enum SecureChannelOpcode: UInt8, Sendable {
    case messageCounterSyncRequest = 0x00
    case messageCounterSyncResponse = 0x01
    case standaloneAck = 0x10
    case pbkdfParamRequest = 0x20
    case pbkdfParamResponse = 0x21
    case pasePake1 = 0x22
    case pasePake2 = 0x23
    case pasePake3 = 0x24
    case caseSigma1 = 0x30
    case caseSigma2 = 0x31
    case caseSigma3 = 0x32
    case caseSigma2Resume = 0x33
    case statusReport = 0x40
    case icdCheckIn = 0x50
}

/// The protocol header, the first part of the (encrypted) payload (4.4.3): exchange flags,
/// opcode, exchange ID, optional vendor ID, protocol ID, optional acknowledged message counter,
/// optional secured extensions.
public struct ProtocolHeader: Hashable, Sendable {
    /// I flag: sent by the exchange's initiator.
    public var isInitiator: Bool
    /// R flag: the sender wants an acknowledgement (MRP).
    public var needsAck: Bool
    /// A flag with its counter: acknowledges this message counter of the peer.
    public var ackedCounter: UInt32?
    public var opcode: UInt8
    public var exchangeID: UInt16
    public var protocolID: ProtocolID
    /// SX flag: opaque secured extensions.
    public var securedExtensions: [UInt8]?

    public init(isInitiator: Bool, needsAck: Bool = false, ackedCounter: UInt32? = nil, opcode: UInt8,
                exchangeID: UInt16, protocolID: ProtocolID) {
        self.isInitiator = isInitiator
        self.needsAck = needsAck
        self.ackedCounter = ackedCounter
        self.opcode = opcode
        self.exchangeID = exchangeID
        self.protocolID = protocolID
    }

    /// Exchange flags: I (bit 0), A (bit 1), R (bit 2), SX (bit 3), V (bit 4).
    public var exchangeFlags: UInt8 {
        var f: UInt8 = 0
        if isInitiator { f |= 0x01 }
        if ackedCounter != nil { f |= 0x02 }
        if needsAck { f |= 0x04 }
        if securedExtensions != nil { f |= 0x08 }
        if protocolID.vendorID != 0 { f |= 0x10 }
        return f
    }

    /// Whether this is the MRP standalone acknowledgement.
    public var isStandaloneAck: Bool {
        protocolID == .secureChannel && opcode == SecureChannelOpcode.standaloneAck.rawValue
    }

    func encode(into w: inout ByteWriter) {
        w.u8(exchangeFlags)
        w.u8(opcode)
        w.u16(exchangeID)
        if protocolID.vendorID != 0 { w.u16(protocolID.vendorID) }
        w.u16(protocolID.id)
        if let ackedCounter { w.u32(ackedCounter) }
        if let securedExtensions {
            w.u16(UInt16(securedExtensions.count))
            w.append(securedExtensions)
        }
    }

    /// The encoded header.
    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 16)
        encode(into: &w)
        return w.bytes
    }

    /// Decodes a protocol header from the start of `bytes`; returns it and the offset of the
    /// application payload.
    public static func decode(_ bytes: [UInt8]) throws(MessagingError) -> (ProtocolHeader, payloadOffset: Int) {
        var r = ByteReader(bytes)
        let flags = try r.u8("exchange flags")
        let opcode = try r.u8("opcode")
        let exchangeID = try r.u16("exchange ID")
        let vendor = flags & 0x10 != 0 ? try r.u16("protocol vendor ID") : 0
        let pid = try r.u16("protocol ID")
        var header = ProtocolHeader(isInitiator: flags & 0x01 != 0, needsAck: flags & 0x04 != 0, opcode: opcode,
                                    exchangeID: exchangeID, protocolID: ProtocolID(vendorID: vendor, id: pid))
        if flags & 0x02 != 0 { header.ackedCounter = try r.u32("acknowledged message counter") }
        if flags & 0x08 != 0 {
            let n = try r.u16("secured extensions length")
            header.securedExtensions = try r.take(Int(n), "secured extensions")
        }
        return (header, r.position)
    }
}
