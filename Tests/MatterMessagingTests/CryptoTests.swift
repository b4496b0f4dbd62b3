@testable import MatterMessaging
import Testing

@Suite struct CryptoTests {
    // Reference values computed with pyca/cryptography 48.0.0 (AESCCM with a 16-byte tag,
    // AES-CTR, HKDF-SHA256), an implementation independent of BoringSSL.
    @Test func aesCCMMatchesAnIndependentImplementation() throws {
        let key = try AESCCMKey(Array(0..<16))
        let nonce = Array(0x10..<0x1D).map(UInt8.init)
        let sealed = key.seal(Array("Matter message payload".utf8), nonce: nonce, aad: hex("00b80b0001000000"))
        #expect(sealed == hex("31800435dd2eceb9de2a3bf048624cf14baa39161ef3a19f9eab2925b0bc5c359209c19b7a9d"))
        #expect(try key.open(sealed, nonce: nonce, aad: hex("00b80b0001000000")) == Array("Matter message payload".utf8))
        var tampered = sealed
        tampered[3] ^= 1
        #expect(throws: MessagingError.self) { try key.open(tampered, nonce: nonce, aad: hex("00b80b0001000000")) }
        #expect(throws: MessagingError.self) { try key.open(sealed, nonce: nonce, aad: hex("00b80b0001000001")) }
    }

    @Test func privacyCTRAndKeyMatchAnIndependentImplementation() throws {
        let key = try AESCCMKey(Array(0..<16))
        let nonce = Array(0x10..<0x1D).map(UInt8.init)
        // AES-CTR from counter block 01 ‖ nonce ‖ 0001 over ten zero bytes.
        #expect(key.ctr([UInt8](repeating: 0, count: 10), nonce: nonce) == hex("7ce17041b85ceed4bb59"))
        #expect(try MessageSecurity.privacyKey(for: Array(0..<16)).keyBytes == hex("6110f2809211975c9f34a10892a00200"))
    }

    @Test func nonceLayout() {
        #expect(MessageSecurity.nonce(securityFlags: 0x80, counter: 0x0102_0304, sourceNodeID: 0x1122_3344_5566_7788)
                == hex("80 04030201 8877665544332211"))
        #expect(MessageSecurity.privacyNonce(sessionID: 0x1234, mic: ArraySlice(0..<16)) == hex("1234 05060708090a0b0c0d0e0f"))
    }

    @Test func securedMessageRoundTripAndTamperDetection() throws {
        let key = try AESCCMKey(keyA)
        let header = MessageHeader(sessionID: 42, messageCounter: 7)
        let ph = ProtocolHeader(isInitiator: true, needsAck: true, opcode: 2, exchangeID: 9, protocolID: .interactionModel)
        let datagram = MessageCodec.encodeSecured(header, ph, [1, 2, 3], key: key, nonceNodeID: 0x55)
        #expect(Array(datagram.prefix(8)) == header.encoded())  // header in the clear (AAD)
        let (h, p, payload) = try MessageCodec.decodeSecured(datagram, key: key, nonceNodeID: 0x55)
        #expect(h == header && p == ph && payload == [1, 2, 3])
        // Wrong nonce node ID, flipped header bit, or flipped ciphertext: all refused.
        #expect(throws: MessagingError.self) { try MessageCodec.decodeSecured(datagram, key: key, nonceNodeID: 0x56) }
        for i in [4, 9, datagram.count - 1] {
            var bad = datagram
            bad[i] ^= 0x01
            #expect(throws: MessagingError.self) { try MessageCodec.decodeSecured(bad, key: key, nonceNodeID: 0x55) }
        }
    }

    @Test func privacyHidesCounterAndNodeIDs() throws {
        let key = try AESCCMKey(keyA)
        let privacy = try MessageSecurity.privacyKey(for: keyA)
        let header = MessageHeader(sessionID: 42, messageCounter: 0x0A0B_0C0D, sourceNodeID: 0x1111_2222_3333_4444,
                                   destination: .node(0x5555_6666_7777_8888))
        let ph = ProtocolHeader(isInitiator: false, opcode: 5, exchangeID: 1, protocolID: .interactionModel)
        let clear = MessageCodec.encodeSecured(header, ph, [9], key: key, nonceNodeID: 0)
        let hidden = MessageCodec.encodeSecured(header, ph, [9], key: key, nonceNodeID: 0, privacyKey: privacy)
        #expect(hidden[3] & 0x80 != 0)                              // P flag
        #expect(Array(hidden[0..<3]) == Array(clear[0..<3]))          // flags and session ID stay clear
        #expect(Array(hidden[4..<24]) != Array(clear[4..<24]))        // counter, source, destination hidden
        var header2 = header
        header2.privacy = true
        let (h, p, payload) = try MessageCodec.decodeSecured(hidden, key: key, nonceNodeID: 0, privacyKey: privacy)
        #expect(h == header2 && p == ph && payload == [9])
        #expect(throws: MessagingError.self) { try MessageCodec.decodeSecured(hidden, key: key, nonceNodeID: 0) }
    }
}
