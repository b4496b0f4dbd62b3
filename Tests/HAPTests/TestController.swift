import Crypto
import Foundation
@testable import HAP
import Logging
import Synchronization

/// Records what a connection asked of the accessories.
final class FakeAccessories: HAPAccessoryHandler, Sendable {
    let db: Mutex<AccessoryDatabase>
    let writes = Mutex<[(CharacteristicID, HAPValue)]>([])
    let identified = Atomic<Int>(0)

    init() {
        db = Mutex(AccessoryDatabase([
            HAPAccessory(aid: 1, services: [
                HAPService(iid: 1, type: "3E", characteristics: [
                    HAPCharacteristic(iid: 2, type: "14", format: .bool, perms: ["pw"], value: nil),
                    HAPCharacteristic(iid: 3, type: "23", format: .string, perms: ["pr"], value: .string("Bridge")),
                ]),
            ]),
            HAPAccessory(aid: 2, services: [
                HAPService(iid: 8, type: "43", characteristics: [
                    HAPCharacteristic(iid: 9, type: "25", format: .bool, perms: ["pr", "pw", "ev"], value: .bool(false)),
                    HAPCharacteristic(iid: 10, type: "8", format: .int, perms: ["pr", "pw", "ev"], value: .int(50), unit: "percentage",
                        minValue: 0, maxValue: 100, minStep: 1),
                    HAPCharacteristic(iid: 11, type: "1E", format: .uint8, perms: ["pr", "pw", "ev", "tw"], value: .int(1), minValue: 0, maxValue: 1),
                ], primary: true),
            ]),
            HAPAccessory(aid: 3, services: [
                HAPService(iid: 8, type: "8A", characteristics: [
                    {
                        var c = HAPCharacteristic(iid: 9, type: "11", format: .float, perms: ["pr", "ev"], value: .double(21.5))
                        c.status = .unreachable
                        return c
                    }(),
                ]),
            ]),
        ]))
    }

    var database: AccessoryDatabase { db.withLock { $0 } }

    func write(_ writes: [(CharacteristicID, HAPValue)], controller: String) async -> [CharacteristicID: HAPStatus] {
        self.writes.withLock { $0 += writes }
        return [:]
    }

    func identify() async { identified.add(1, ordering: .relaxed) }
}

/// A controller in process: speaks HTTP and HAP's pairing to a ``HAPConnection`` (no socket).
final class TestController {
    let connection: HAPConnection
    let outputs: AsyncStream<HAPConnection.Output>
    var framing: SecureFraming?
    /// What the accessory sent, decrypted, not yet read.
    var received: [UInt8] = []
    var closedReason: String?
    let identifier: String
    let key: Curve25519.Signing.PrivateKey

    init(server: PairingServer, handler: any HAPAccessoryHandler, connections: HAPConnections, identifier: String = "controller-1",
         key: Curve25519.Signing.PrivateKey = .init(), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        let (stream, sink) = AsyncStream<HAPConnection.Output>.makeStream()
        outputs = stream
        connection = HAPConnection(pairing: server, handler: handler, connections: connections, sink: sink,
            logger: Logger(label: "test.hap"), now: now)
        self.identifier = identifier
        self.key = key
    }

    struct Response {
        var status: Int
        var event: Bool
        var body: [UInt8]
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(body)) }
        var tlv: TLV8? { try? TLV8(decoding: body) }
    }

    /// Sends raw bytes (encrypted when the session is), collecting the outputs.
    func sendRaw(_ bytes: [UInt8], encrypt: Bool = true) async {
        var wire = bytes
        if encrypt, var f = framing {
            wire = f.seal(bytes)
            framing = f
        }
        let outs = await connection.receive(wire)
        absorb(outs)
    }

    var accessoryFraming: SecureFraming?

    func absorb(_ outs: [HAPConnection.Output]) {
        for o in outs {
            switch o {
            case .send(let bytes):
                if var f = accessoryFraming {
                    // Seal as the accessory would, then open as the controller: checks the framing end to end.
                    var sealed = f.seal(bytes)
                    accessoryFraming = f
                    var mine = framing!
                    received += try! mine.open(&sealed)
                    framing = mine
                } else {
                    received += bytes
                }
            case .startEncryption(let f):
                accessoryFraming = f
            case .close(let why):
                closedReason = why
            }
        }
    }

    lazy var pushed = outputs.makeAsyncIterator()

    /// Takes one output pushed from elsewhere (an event from notify, a close) and returns the
    /// response or event it completes.
    func nextPushed() async -> Response? {
        guard let o = await pushed.next() else { return nil }
        absorb([o])
        return nextResponse()
    }

    func request(_ method: String, _ target: String, body: [UInt8] = [], contentType: String? = nil) async -> Response? {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: test\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        await sendRaw(Array(head.utf8) + body)
        return nextResponse()
    }

    func nextResponse() -> Response? {
        guard let end = HTTPRequest.find(received, [13, 10, 13, 10]) else { return nil }
        let head = String(decoding: received[0..<end], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let first = lines[0].split(separator: " ")
        let length = lines.compactMap { l -> Int? in
            let p = l.split(separator: ":", maxSplits: 1)
            return p.count == 2 && p[0].lowercased() == "content-length" ? Int(p[1].trimmingCharacters(in: .whitespaces)) : nil
        }.first ?? 0
        guard received.count >= end + 4 + length else { return nil }
        let body = Array(received[(end + 4)..<(end + 4 + length)])
        received.removeFirst(end + 4 + length)
        return Response(status: Int(first[1]) ?? 0, event: first[0] == "EVENT/1.0", body: body)
    }

    func tlv(_ path: String, _ tlv: TLV8) async -> TLV8? {
        await request("POST", path, body: tlv.encoded(), contentType: "application/pairing+tlv8")?.tlv
    }

    /// Pair-setup M1–M6 with a setup code; returns the accessory's LTPK, or the TLV error.
    func pairSetup(code: String) async -> Result<[UInt8], TLVError> {
        guard let m2 = await tlv("/pair-setup", TLV8([(.state, [1]), (.method, [0])])) else { return .failure(.unknown) }
        if let e = m2.byte(.error) { return .failure(TLVError(rawValue: e) ?? .unknown) }
        let srp = SRPClient<SHA512>(group: .rfc5054_3072, secret: PairingServer.secureRandom(32))
        let c = srp.proof(username: Array("Pair-Setup".utf8), password: Array(code.utf8), salt: m2[.salt]!, serverPublicKey: m2[.publicKey]!)
        guard let m4 = await tlv("/pair-setup", TLV8([(.state, [3]), (.publicKey, srp.publicKey), (.proof, c.proof)])) else { return .failure(.unknown) }
        if let e = m4.byte(.error) { return .failure(TLVError(rawValue: e) ?? .unknown) }
        let encKey = HAPCrypto.hkdf(c.key, salt: "Pair-Setup-Encrypt-Salt", info: "Pair-Setup-Encrypt-Info")
        let x = HAPCrypto.bytes(HAPCrypto.hkdf(c.key, salt: "Pair-Setup-Controller-Sign-Salt", info: "Pair-Setup-Controller-Sign-Info"))
        let id = Array(identifier.utf8)
        let ltpk = Array(key.publicKey.rawRepresentation)
        let sig = try! key.signature(for: x + id + ltpk)
        let sub = TLV8([(.identifier, id), (.publicKey, ltpk), (.signature, Array(sig))])
        let sealed = HAPCrypto.seal(sub.encoded(), key: encKey, nonce: HAPCrypto.nonce(label: "PS-Msg05"))
        guard let m6 = await tlv("/pair-setup", TLV8([(.state, [5]), (.encryptedData, sealed)])) else { return .failure(.unknown) }
        if let e = m6.byte(.error) { return .failure(TLVError(rawValue: e) ?? .unknown) }
        guard let plain = HAPCrypto.open(m6[.encryptedData]!, key: encKey, nonce: HAPCrypto.nonce(label: "PS-Msg06")),
              let info = try? TLV8(decoding: plain), let accLTPK = info[.publicKey], let accID = info[.identifier], let accSig = info[.signature]
        else { return .failure(.unknown) }
        let ax = HAPCrypto.bytes(HAPCrypto.hkdf(c.key, salt: "Pair-Setup-Accessory-Sign-Salt", info: "Pair-Setup-Accessory-Sign-Info"))
        guard (try? Curve25519.Signing.PublicKey(rawRepresentation: accLTPK))?.isValidSignature(accSig, for: ax + accID + accLTPK) == true else {
            return .failure(.authentication)
        }
        return .success(accLTPK)
    }

    /// Pair-verify; on success the session is encrypted from here on.
    func pairVerify(accessoryLTPK: [UInt8], accessoryID: String) async -> Bool {
        let eph = Curve25519.KeyAgreement.PrivateKey()
        let ours = Array(eph.publicKey.rawRepresentation)
        guard let m2 = await tlv("/pair-verify", TLV8([(.state, [1]), (.publicKey, ours)])), m2.byte(.error) == nil,
              let theirs = m2[.publicKey], let sealed = m2[.encryptedData] else { return false }
        let shared = try! eph.sharedSecretFromKeyAgreement(with: .init(rawRepresentation: theirs)).withUnsafeBytes { Array($0) }
        let k = HAPCrypto.hkdf(shared, salt: "Pair-Verify-Encrypt-Salt", info: "Pair-Verify-Encrypt-Info")
        guard let plain = HAPCrypto.open(sealed, key: k, nonce: HAPCrypto.nonce(label: "PV-Msg02")), let sub = try? TLV8(decoding: plain),
              sub[.identifier] == Array(accessoryID.utf8),
              (try? Curve25519.Signing.PublicKey(rawRepresentation: accessoryLTPK))?.isValidSignature(sub[.signature]!, for: theirs + Array(accessoryID.utf8) + ours) == true
        else { return false }
        let id = Array(identifier.utf8)
        let sig = try! key.signature(for: ours + id + theirs)
        let m3 = HAPCrypto.seal(TLV8([(.identifier, id), (.signature, Array(sig))]).encoded(), key: k, nonce: HAPCrypto.nonce(label: "PV-Msg03"))
        guard let m4 = await tlv("/pair-verify", TLV8([(.state, [3]), (.encryptedData, m3)])), m4.byte(.state) == 4, m4.byte(.error) == nil else { return false }
        framing = SecureFraming(controller: SessionKeys(sharedSecret: shared))
        return true
    }
}
