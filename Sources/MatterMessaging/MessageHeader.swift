/// The unencrypted message header (Matter Core Specification 4.4.1 "Message Header Field
/// Descriptions"): message flags, session ID, security flags, message counter, optional source
/// node ID, optional destination (node ID or group ID) and optional message extensions.
///
/// Everything here is little-endian on the wire. The header is the AAD of the AES-CCM
/// encryption; its counter, source and destination are the part privacy obfuscation hides.
public struct MessageHeader: Hashable, Sendable {
    /// The destination field (DSIZ in the message flags).
    public enum Destination: Hashable, Sendable {
        case none
        case node(UInt64)
        case group(UInt16)
    }

    /// Session type in the security flags.
    public enum SessionType: UInt8, Hashable, Sendable {
        case unicast = 0
        case group = 1
    }

    /// 0 is the only version defined.
    public var version: UInt8 = 0
    /// 0 means the unsecured session.
    public var sessionID: UInt16
    /// P flag: the counter, source and destination are obfuscated with the privacy key.
    public var privacy: Bool = false
    /// C flag: a control message (counter-synchronization), which uses the control counter.
    public var control: Bool = false
    public var sessionType: SessionType = .unicast
    public var messageCounter: UInt32
    public var sourceNodeID: UInt64?
    public var destination: Destination = .none
    /// The message extensions block (MX flag), opaque.
    public var extensions: [UInt8]?

    public init(sessionID: UInt16, messageCounter: UInt32, sourceNodeID: UInt64? = nil,
                destination: Destination = .none, sessionType: SessionType = .unicast) {
        self.sessionID = sessionID
        self.messageCounter = messageCounter
        self.sourceNodeID = sourceNodeID
        self.destination = destination
        self.sessionType = sessionType
    }

    /// The message flags byte: version (bits 4–7), S (bit 2), DSIZ (bits 0–1).
    public var messageFlags: UInt8 {
        var f = version << 4
        if sourceNodeID != nil { f |= 0x04 }
        switch destination {
        case .none: break
        case .node: f |= 0x01
        case .group: f |= 0x02
        }
        return f
    }

    /// The security flags byte: P (bit 7), C (bit 6), MX (bit 5), session type (bits 0–1).
    public var securityFlags: UInt8 {
        var f = sessionType.rawValue
        if privacy { f |= 0x80 }
        if control { f |= 0x40 }
        if extensions != nil { f |= 0x20 }
        return f
    }

    /// Whether this is the unsecured session (session ID 0, unicast).
    public var isUnsecured: Bool { sessionID == 0 && sessionType == .unicast }

    /// Offset of the message counter: the start of the part privacy obfuscation covers.
    static let privacyOffset = 4

    /// Length of the obfuscated part: counter, source and destination (not the extensions).
    var privacyLength: Int {
        4 + (sourceNodeID == nil ? 0 : 8) + {
            switch destination {
            case .none: return 0
            case .node: return 8
            case .group: return 2
            }
        }()
    }

    /// The encoded header.
    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 32)
        encode(into: &w)
        return w.bytes
    }

    func encode(into w: inout ByteWriter) {
        w.u8(messageFlags)
        w.u16(sessionID)
        w.u8(securityFlags)
        w.u32(messageCounter)
        if let sourceNodeID { w.u64(sourceNodeID) }
        switch destination {
        case .none: break
        case .node(let n): w.u64(n)
        case .group(let g): w.u16(g)
        }
        if let extensions {
            w.u16(UInt16(extensions.count))
            w.append(extensions)
        }
    }

    /// Decodes a header from the start of `bytes`; returns it and the offset of the payload.
    public static func decode(_ bytes: [UInt8]) throws(MessagingError) -> (MessageHeader, payloadOffset: Int) {
        var r = ByteReader(bytes)
        let flags = try r.u8("message flags")
        let version = flags >> 4
        guard version == 0 else {
            throw MessagingError(.unsupportedVersion, "message format version \(version); only 0 is known")
        }
        let sessionID = try r.u16("session ID")
        let security = try r.u8("security flags")
        guard let type = SessionType(rawValue: security & 0x03) else {
            throw MessagingError(.malformed, "reserved session type \(security & 0x03)")
        }
        let counter = try r.u32("message counter")
        var header = MessageHeader(sessionID: sessionID, messageCounter: counter, sessionType: type)
        header.privacy = security & 0x80 != 0
        header.control = security & 0x40 != 0
        if flags & 0x04 != 0 { header.sourceNodeID = try r.u64("source node ID") }
        switch flags & 0x03 {
        case 0: header.destination = .none
        case 1: header.destination = .node(try r.u64("destination node ID"))
        case 2: header.destination = .group(try r.u16("destination group ID"))
        default: throw MessagingError(.malformed, "reserved DSIZ 3")
        }
        if security & 0x20 != 0 {
            let n = try r.u16("message extensions length")
            header.extensions = try r.take(Int(n), "message extensions")
        }
        if type == .group {
            guard case .group = header.destination, header.sourceNodeID != nil else {
                throw MessagingError(.malformed, "a group message needs a source node ID and a group ID")
            }
        }
        return (header, r.position)
    }
}
