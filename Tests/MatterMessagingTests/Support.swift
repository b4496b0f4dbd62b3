@testable import MatterMessaging

func hex(_ s: String) -> [UInt8] {
    let d = Array(s.filter { !$0.isWhitespace })
    return stride(from: 0, to: d.count, by: 2).map { UInt8(String(d[$0..<$0 + 2]), radix: 16)! }
}

/// A manual clock's instant: tests move time by hand, never sleep.
struct TestInstant: InstantProtocol, CustomStringConvertible {
    var offset: Duration
    func advanced(by d: Duration) -> TestInstant { TestInstant(offset: offset + d) }
    func duration(to other: TestInstant) -> Duration { other.offset - offset }
    static func < (a: TestInstant, b: TestInstant) -> Bool { a.offset < b.offset }
    static let zero = TestInstant(offset: .zero)
    var description: String { "t+\(offset)" }
}

typealias Layer = MessageLayer<TestInstant>

let keyA: [UInt8] = Array(0..<16)
let keyB: [UInt8] = Array(16..<32)
let addressA = PeerAddress(host: "node-a", port: 5540)
let addressB = PeerAddress(host: "node-b", port: 5540)

/// Two layers with a secure session between them (A initiator, B responder).
func securePair(privacy: Bool = false, seedA: UInt64 = 1, seedB: UInt64 = 2) throws -> (Layer, SessionKey, Layer, SessionKey) {
    var a = Layer(seed: seedA)
    var b = Layer(seed: seedB)
    let sa = try a.addSecureSession(SecureSessionParameters(role: .initiator, i2rKey: keyA, r2iKey: keyB, localSessionID: 100,
                                                            peerSessionID: 200, peerAddress: addressB, privacy: privacy))
    let sb = try b.addSecureSession(SecureSessionParameters(role: .responder, i2rKey: keyA, r2iKey: keyB, localSessionID: 200,
                                                            peerSessionID: 100, peerAddress: addressA, privacy: privacy))
    return (a, sa, b, sb)
}

extension Array where Element == MessageEffect {
    var datagrams: [[UInt8]] { compactMap { if case .send(let d, _) = $0 { return d } else { return nil } } }
    var delivered: [IncomingMessage] { compactMap { if case .deliver(let m) = $0 { return m } else { return nil } } }
    var failures: [ExchangeKey] { compactMap { if case .exchangeFailed(let k, _) = $0 { return k } else { return nil } } }
}

/// Parses a datagram sent on the clear or decrypts it with the given key, to look at its
/// protocol header.
func protocolHeader(of datagram: [UInt8], key: [UInt8]) throws -> ProtocolHeader {
    if datagram[1] == 0 && datagram[2] == 0 { return try MessageCodec.decodeUnsecured(datagram).1 }
    return try MessageCodec.decodeSecured(datagram, key: AESCCMKey(key), nonceNodeID: 0,
                                          privacyKey: MessageSecurity.privacyKey(for: key)).1
}
