// CASE between two Hearth nodes whose certificates another authority issued (the CHIP
// controller's CA in scripts/test-matter-controller):
//
//   matter-test-responder case-csr DIR NAME...       new operational key + NOCSR elements per node
//   matter-test-responder case-run DIR INITIATOR RESPONDER [--expect-failure]
//
// case-csr writes DIR/NAME.key (raw private key, hex) and DIR/NAME.nocsr (NOCSR elements TLV,
// hex, Core Specification 11.18.5.6: the PKCS#10 CSR and a 32-byte nonce). The authority then
// writes DIR/NAME.noc, DIR/NAME.rcac, optionally DIR/NAME.icac (Matter TLV certificates, hex)
// and DIR/ipk (the epoch IPK, hex). case-run loads both nodes and runs Sigma1/2/3 between an
// initiator and a responder over UDP on [::1], each side validating the other's chain to the
// authority's root; then a resumption (Sigma1 with resumption ID, Sigma2_Resume). Prints
// "CASE ESTABLISHED …" / "CASE RESUMED …" and exits 0, or "CASE FAILED …" and exits 1
// (inverted with --expect-failure).
import Crypto
import Glibc
import MatterMessaging
import MatterSecurity
import MatterTLV

func hexBytes(_ text: String) -> [UInt8]? {
    let clean = text.filter { !$0.isWhitespace }
    guard clean.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    var index = clean.startIndex
    while index < clean.endIndex {
        let next = clean.index(index, offsetBy: 2)
        guard let byte = UInt8(clean[index..<next], radix: 16) else { return nil }
        out.append(byte)
        index = next
    }
    return out
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

func readText(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var text = ""
    var chunk = [CChar](repeating: 0, count: 4096)
    while fgets(&chunk, Int32(chunk.count), file) != nil {
        text += String(decoding: chunk.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return text
}

func writeText(_ path: String, _ text: String) -> Bool {
    guard let file = fopen(path, "w") else { return false }
    defer { fclose(file) }
    return fputs(text, file) >= 0
}

func caseFail(_ message: String) -> Never {
    print("CASE FAILED \(message)")
    fflush(nil)
    exit(1)
}

/// `case-csr DIR NAME...`
func runCaseCSR(_ arguments: [String]) -> Never {
    guard arguments.count >= 2 else { caseFail("usage: case-csr DIR NAME...") }
    let dir = arguments[0]
    for name in arguments.dropFirst() {
        let key = P256.Signing.PrivateKey()
        do {
            let csr = try Fabric.certificateSigningRequest(for: key)
            let nonce = (0..<32).map { _ in UInt8.random(in: 0...255) }
            let elements = try TLVElement.structure([TLVElement(.context(1), .bytes(csr)), TLVElement(.context(2), .bytes(nonce))]).encoded()
            guard writeText("\(dir)/\(name).key", hexString(Array(key.rawRepresentation))),
                writeText("\(dir)/\(name).nocsr", hexString(elements))
            else { caseFail("cannot write into \(dir)") }
            print("CSR \(name) \(csr.count) bytes")
        } catch {
            caseFail("CSR for \(name): \(error)")
        }
    }
    fflush(nil)
    exit(0)
}

/// Loads one node's key and the chain the authority issued for it.
func loadNode(_ dir: String, _ name: String, index: UInt8) throws -> FabricCredentials {
    func hexFile(_ suffix: String) -> [UInt8]? { readText("\(dir)/\(suffix)").flatMap(hexBytes) }
    guard let keyBytes = hexFile("\(name).key"), let nocBytes = hexFile("\(name).noc"), let rcacBytes = hexFile("\(name).rcac"),
        let ipk = hexFile("ipk")
    else { caseFail("\(name): key, NOC, RCAC or IPK missing in \(dir)") }
    let key = try P256.Signing.PrivateKey(rawRepresentation: keyBytes)
    let noc = try MatterCertificate(tlv: nocBytes)
    let rcac = try MatterCertificate(tlv: rcacBytes)
    let icac = try hexFile("\(name).icac").map { try MatterCertificate(tlv: $0) }
    // The chain must validate before CASE uses it: the NOC holds our key, signed up to the root.
    let identity = try OperationalChain(noc: noc, icac: icac).validate(root: rcac)
    guard identity.publicKey == Array(key.publicKey.x963Representation) else { caseFail("\(name): the NOC is not for our key") }
    print("LOADED \(name) node=0x\(String(identity.nodeID, radix: 16)) fabric=0x\(String(identity.fabricID, radix: 16)) icac=\(icac != nil)")
    return try FabricCredentials(fabricIndex: index, root: rcac, icac: icac, noc: noc, operationalKey: key, epochIPK: ipk)
}

/// A UDP socket on [::1] with an ephemeral port.
func loopbackSocket() -> (fd: Int32, port: UInt16) {
    let fd = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { caseFail("socket: errno \(errno)") }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
    let rc = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Int32 in
            guard bind(fd, p, length) == 0 else { return -1 }
            return getsockname(fd, p, &length)
        }
    }
    guard rc == 0 else { caseFail("bind [::1]: errno \(errno)") }
    var tv = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    return (fd, UInt16(bigEndian: address.sin6_port))
}

func sendDatagram(_ fd: Int32, to port: UInt16, _ bytes: [UInt8]) {
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    address.sin6_port = port.bigEndian
    _ = bytes.withUnsafeBytes { raw in
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
    }
}

func receiveDatagram(_ fd: Int32) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 1280)
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    return n > 0 ? Array(buffer[0..<n]) : nil
}

/// One side of a handshake on its own socket: wraps Secure Channel messages into unsecured
/// Matter messages (message header + protocol header) and unwraps what arrives.
struct HandshakeEndpoint {
    let fd: Int32
    let port: UInt16
    let nodeID: UInt64
    let isInitiator: Bool
    var counter = UInt32.random(in: 1...0x0FFF_FFFF)

    mutating func send(_ message: SecureChannelMessage, exchangeID: UInt16, to peerPort: UInt16) {
        counter &+= 1
        var header = MessageHeader(sessionID: 0, messageCounter: counter)
        header.sourceNodeID = nodeID
        let protocolHeader = ProtocolHeader(
            isInitiator: isInitiator, needsAck: false, opcode: message.opcode.rawValue, exchangeID: exchangeID, protocolID: .secureChannel)
        sendDatagram(fd, to: peerPort, header.encoded() + protocolHeader.encoded() + message.payload)
    }

    func receive() -> (MatterSecurity.SecureChannelOpcode, [UInt8], exchangeID: UInt16)? {
        guard let datagram = receiveDatagram(fd), let (header, offset) = try? MessageHeader.decode(datagram), header.sessionID == 0,
            let (protocolHeader, bodyOffset) = try? ProtocolHeader.decode(Array(datagram[offset...])),
            protocolHeader.protocolID == .secureChannel, let opcode = MatterSecurity.SecureChannelOpcode(rawValue: protocolHeader.opcode)
        else { return nil }
        return (opcode, Array(datagram[(offset + bodyOffset)...]), protocolHeader.exchangeID)
    }
}

/// Delivers the next datagram that arrives at `endpoint` to `machine` and carries out its
/// effects (replies go to `peerPort`). Returns the session when it is established, or why not.
func step<M: HandshakeStateMachine>(
    _ machine: inout M, at endpoint: inout HandshakeEndpoint, replyTo peerPort: UInt16, exchangeID: UInt16, _ role: String
) -> Result<EstablishedSession?, HandshakeFailure> {
    guard let (opcode, payload, _) = endpoint.receive() else { return .failure(HandshakeFailure("the \(role) received nothing")) }
    var session: EstablishedSession?
    for effect in machine.receive(opcode, payload) {
        switch effect {
        case .send(let m): endpoint.send(m, exchangeID: exchangeID, to: peerPort)
        case .established(let s): session = s
        case .failed(let e): return .failure(HandshakeFailure("\(role): \(e)"))
        }
    }
    return .success(session)
}

struct HandshakeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs one handshake over the two endpoints; returns both sides' sessions.
func handshake<I: HandshakeStateMachine, R: HandshakeStateMachine>(
    _ initiator: inout I, _ responder: inout R, first: SecureChannelMessage, _ a: inout HandshakeEndpoint, _ b: inout HandshakeEndpoint
) -> (EstablishedSession?, EstablishedSession?, String?) {
    let exchangeID = UInt16.random(in: 1...0xFFFE)
    var initiatorSession: EstablishedSession?, responderSession: EstablishedSession?
    a.send(first, exchangeID: exchangeID, to: b.port)
    for turn in 0..<8 {  // Sigma1, Sigma2, Sigma3, status report (each side in turn): bounded
        let result = turn % 2 == 0
            ? step(&responder, at: &b, replyTo: a.port, exchangeID: exchangeID, "responder")
            : step(&initiator, at: &a, replyTo: b.port, exchangeID: exchangeID, "initiator")
        switch result {
        case .failure(let failure): return (initiatorSession, responderSession, failure.description)
        case .success(let session?): if turn % 2 == 0 { responderSession = session } else { initiatorSession = session }
        case .success(nil): break
        }
        if initiatorSession != nil, responderSession != nil { break }
    }
    return (initiatorSession, responderSession, nil)
}

/// `case-run DIR INITIATOR RESPONDER [--expect-failure]`
func runCaseCheck(_ arguments: [String]) -> Never {
    let expectFailure = arguments.contains("--expect-failure")
    let names = arguments.filter { $0 != "--expect-failure" }
    guard names.count == 3 else { caseFail("usage: case-run DIR INITIATOR RESPONDER [--expect-failure]") }
    func finish(_ ok: Bool, _ line: String) -> Never {
        print(line)
        fflush(nil)
        exit(ok != expectFailure ? 0 : 1)
    }
    do {
        let initiatorNode = try loadNode(names[0], names[1], index: 1)
        let responderNode = try loadNode(names[0], names[2], index: 1)
        let (fdA, portA) = loopbackSocket(), (fdB, portB) = loopbackSocket()
        var a = HandshakeEndpoint(fd: fdA, port: portA, nodeID: initiatorNode.nodeID, isInitiator: true)
        var b = HandshakeEndpoint(fd: fdB, port: portB, nodeID: responderNode.nodeID, isInitiator: false)

        var initiator = CASEInitiator(credentials: initiatorNode, peerNodeID: responderNode.nodeID, localSessionID: 11)
        var responder = CASEResponder(fabrics: [responderNode], localSessionID: 22)
        let first = try initiator.start()
        let (si, sr, error) = handshake(&initiator, &responder, first: first, &a, &b)
        guard let si, let sr else { finish(false, "CASE FAILED \(error ?? "no session")") }
        guard si.keys == sr.keys, si.peerNodeID == responderNode.nodeID, sr.peerNodeID == initiatorNode.nodeID else {
            finish(false, "CASE FAILED the two sides disagree on keys or peers")
        }
        print("CASE ESTABLISHED initiator=0x\(String(initiatorNode.nodeID, radix: 16)) responder=0x\(String(responderNode.nodeID, radix: 16)) "
              + "fabric=0x\(String(initiatorNode.fabricID, radix: 16)) compressedFabric=\(String(initiatorNode.compressedFabricID, radix: 16))")

        // Resumption with what the first session left.
        guard let record = si.resumption, let responderRecord = sr.resumption else { finish(false, "CASE FAILED no resumption record") }
        var resumingInitiator = CASEInitiator(
            credentials: initiatorNode, peerNodeID: responderNode.nodeID, localSessionID: 12, resumption: record)
        var resumingResponder = CASEResponder(fabrics: [responderNode], localSessionID: 23, resumptions: [responderRecord])
        let resumeFirst = try resumingInitiator.start()
        let (ri, rr, resumeError) = handshake(&resumingInitiator, &resumingResponder, first: resumeFirst, &a, &b)
        guard let ri, let rr, ri.keys == rr.keys, ri.keys != si.keys else { finish(false, "CASE FAILED resumption: \(resumeError ?? "keys")") }
        finish(true, "CASE RESUMED localSession=\(ri.localSessionID) peerSession=\(ri.peerSessionID)")
    } catch {
        finish(false, "CASE FAILED \(error)")
    }
}
