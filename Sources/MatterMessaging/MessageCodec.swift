/// Puts messages together and takes them apart (Matter Core Specification 4.4, 4.8, 4.9):
/// header, protocol header, AES-CCM with the header as AAD, privacy obfuscation. Stateless;
/// sessions and counters live in `MessageLayer`.
public enum MessageCodec {
    /// An unsecured message: header ‖ protocol header ‖ payload, no integrity check.
    public static func encodeUnsecured(_ header: MessageHeader, _ protocolHeader: ProtocolHeader, _ payload: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 32 + payload.count)
        header.encode(into: &w)
        protocolHeader.encode(into: &w)
        w.append(payload)
        return w.bytes
    }

    /// A secured message: header ‖ AES-CCM(protocol header ‖ payload) ‖ MIC. With a privacy
    /// key, the P flag is set and the counter, source and destination are then obfuscated.
    ///
    /// - Parameter nonceNodeID: the sender's node ID for the nonce (0 for PASE sessions).
    public static func encodeSecured(_ header: MessageHeader, _ protocolHeader: ProtocolHeader, _ payload: [UInt8],
                                     key: AESCCMKey, nonceNodeID: UInt64, privacyKey: AESCCMKey? = nil) -> [UInt8] {
        var header = header
        header.privacy = privacyKey != nil
        var w = ByteWriter(capacity: 48 + payload.count)
        header.encode(into: &w)
        let aad = w.bytes
        var plain = ByteWriter(capacity: 16 + payload.count)
        protocolHeader.encode(into: &plain)
        plain.append(payload)
        let nonce = MessageSecurity.nonce(securityFlags: header.securityFlags, counter: header.messageCounter,
                                          sourceNodeID: header.sourceNodeID ?? nonceNodeID)
        var datagram = aad + key.seal(plain.bytes, nonce: nonce, aad: aad)
        if let privacyKey {
            obfuscate(&datagram, header: header, privacyKey: privacyKey)
        }
        return datagram
    }

    /// The session ID and whether it is a group session, readable before any decryption.
    public static func peekSession(_ datagram: [UInt8]) throws(MessagingError) -> (sessionID: UInt16, type: MessageHeader.SessionType, privacy: Bool) {
        guard datagram.count >= 8 else { throw MessagingError(.malformed, "message shorter than its header") }
        let sid = UInt16(datagram[1]) | UInt16(datagram[2]) << 8
        let sec = datagram[3]
        return (sid, sec & 0x03 == 1 ? .group : .unicast, sec & 0x80 != 0)
    }

    /// Takes an unsecured message apart.
    public static func decodeUnsecured(_ datagram: [UInt8]) throws(MessagingError) -> (MessageHeader, ProtocolHeader, [UInt8]) {
        let (header, offset) = try MessageHeader.decode(datagram)
        guard header.isUnsecured, !header.privacy else {
            throw MessagingError(.malformed, "not an unsecured message (session \(header.sessionID))")
        }
        let rest = Array(datagram[offset...])
        let (ph, payloadOffset) = try ProtocolHeader.decode(rest)
        return (header, ph, Array(rest[payloadOffset...]))
    }

    /// Takes a secured message apart: undoes privacy obfuscation if the P flag is set, checks
    /// the MIC, and parses the protocol header.
    ///
    /// - Parameter nonceNodeID: the peer's node ID, used when the header has no source node ID.
    public static func decodeSecured(_ datagram: [UInt8], key: AESCCMKey, nonceNodeID: UInt64,
                                     privacyKey: AESCCMKey? = nil) throws(MessagingError) -> (MessageHeader, ProtocolHeader, [UInt8]) {
        var datagram = datagram
        if datagram.count >= 4, datagram[3] & 0x80 != 0 {
            guard let privacyKey else { throw MessagingError(.malformed, "privacy flag set but no privacy key") }
            try deobfuscate(&datagram, privacyKey: privacyKey)
        }
        let (header, offset) = try MessageHeader.decode(datagram)
        guard datagram.count - offset >= AESCCMKey.tagLength else {
            throw MessagingError(.malformed, "secured message without room for its MIC")
        }
        let aad = Array(datagram[..<offset])
        let nonce = MessageSecurity.nonce(securityFlags: header.securityFlags, counter: header.messageCounter,
                                          sourceNodeID: header.sourceNodeID ?? nonceNodeID)
        let plain = try key.open(Array(datagram[offset...]), nonce: nonce, aad: aad)
        let (ph, payloadOffset) = try ProtocolHeader.decode(plain)
        return (header, ph, Array(plain[payloadOffset...]))
    }

    /// Obfuscates counter, source and destination in place (4.9.3).
    static func obfuscate(_ datagram: inout [UInt8], header: MessageHeader, privacyKey: AESCCMKey) {
        let range = MessageHeader.privacyOffset..<(MessageHeader.privacyOffset + header.privacyLength)
        let mic = datagram.suffix(AESCCMKey.tagLength)
        let nonce = MessageSecurity.privacyNonce(sessionID: header.sessionID, mic: mic)
        let hidden = privacyKey.ctr(Array(datagram[range]), nonce: nonce)
        datagram.replaceSubrange(range, with: hidden)
    }

    /// Undoes `obfuscate`: the lengths come from the (clear) message flags.
    static func deobfuscate(_ datagram: inout [UInt8], privacyKey: AESCCMKey) throws(MessagingError) {
        guard datagram.count >= 8 + AESCCMKey.tagLength else { throw MessagingError(.malformed, "message too short") }
        let flags = datagram[0]
        let length = 4 + (flags & 0x04 != 0 ? 8 : 0) + [0, 8, 2, 0][Int(flags & 0x03)]
        let range = MessageHeader.privacyOffset..<(MessageHeader.privacyOffset + length)
        guard range.upperBound + AESCCMKey.tagLength <= datagram.count else { throw MessagingError(.malformed, "message too short") }
        let sid = UInt16(datagram[1]) | UInt16(datagram[2]) << 8
        let nonce = MessageSecurity.privacyNonce(sessionID: sid, mic: datagram.suffix(AESCCMKey.tagLength))
        datagram.replaceSubrange(range, with: privacyKey.ctr(Array(datagram[range]), nonce: nonce))
    }
}
