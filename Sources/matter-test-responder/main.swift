// A Matter commissionable-device stand-in for end-to-end tests: it answers PASE on UDP with
// MatterSecurity's responder over MatterMessaging's headers, prints one line per event, and exits
// after the session is established (or after --timeout seconds).
//
//   matter-test-responder --port 5541 --passcode 20202021 [--timeout 30] [--stay]
//   matter-test-responder case-csr … | case-run …   (CASE with another authority's certificates: CASECheck.swift)
//   matter-test-responder im …   (PASE, then Interaction Model reads/invokes/subscriptions: InteractionMode.swift)
//   matter-test-responder write-paa FILE   (the test PAA, DER, for a controller's trust store)
//
// Development tool: it speaks only the unsecured session (PASE); no MRP retransmission (a lost
// reply is repeated when the peer retransmits), no discovery.
import Glibc
import MatterMessaging
import MatterSecurity

struct Options {
    var port: UInt16 = 5541
    var passcode: UInt32 = 20_202_021
    var timeout: Double = 30
    var stay = false
}

func parseOptions() -> Options {
    var options = Options()
    var args = CommandLine.arguments.dropFirst().makeIterator()
    while let arg = args.next() {
        switch arg {
        case "--port": options.port = UInt16(args.next() ?? "") ?? options.port
        case "--passcode": options.passcode = UInt32(args.next() ?? "") ?? options.passcode
        case "--timeout": options.timeout = Double(args.next() ?? "") ?? options.timeout
        case "--stay": options.stay = true
        default:
            print("unknown argument \(arg)")
            exit(64)
        }
    }
    return options
}

func say(_ line: String) {
    print(line)
    fflush(nil)  // all output streams
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A dual-stack UDP socket on [::]:port (IPv4 peers arrive as ::ffff:a.b.c.d).
func openSocket(port: UInt16) -> Int32 {
    let fd = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { fatalError("socket: \(errno)") }
    var off: Int32 = 0
    setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
    var on: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_port = port.bigEndian
    address.sin6_addr = in6addr_any
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
    }
    guard rc == 0 else { fatalError("bind [::]:\(port): errno \(errno)") }
    var tv = timeval(tv_sec: 0, tv_usec: 200_000)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    return fd
}

switch CommandLine.arguments.dropFirst().first {
case "case-csr": runCaseCSR(Array(CommandLine.arguments.dropFirst(2)))
case "case-run": runCaseCheck(Array(CommandLine.arguments.dropFirst(2)))
case "commissioning-check": runCommissioningCheck(Array(CommandLine.arguments.dropFirst(2)))
case "im": await runInteractionResponder(Array(CommandLine.arguments.dropFirst(2)))
case "write-paa":
    // The CSA test PAA (DER) for a controller's PAA trust store, so it accepts Hearth's development DAC chain.
    guard CommandLine.arguments.count == 3, let file = fopen(CommandLine.arguments[2], "w") else { say("usage: write-paa FILE"); exit(64) }
    let paa = DevelopmentAttestation.paaCertificate
    let written = paa.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
    exit(written == paa.count ? 0 : 1)
default: break
}

let options = parseOptions()
let salt = Array("Hearth test responder salt".utf8)
let iterations = 1000
guard let passcode = try? SetupPasscode(options.passcode),
    let verifier = try? Spake2pVerifier(passcode: passcode, salt: salt, iterations: iterations)
else {
    say("invalid passcode \(options.passcode)")
    exit(64)
}
let fd = openSocket(port: options.port)
say("LISTENING port=\(options.port)")

var counter = UInt32.random(in: 1...0x0FFF_FFFF)
var responder: PASEResponder?
var exchangeID: UInt16 = 0
var lastReceived: (source: UInt64?, counter: UInt32)?
var lastReply: [UInt8]?
let deadline = now() + options.timeout
var established = false
var buffer = [UInt8](repeating: 0, count: 1280)

while now() < deadline {
    var peer = sockaddr_storage()
    var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let n = buffer.withUnsafeMutableBytes { raw in
        withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &peerLength) }
        }
    }
    if n <= 0 { continue }
    let datagram = Array(buffer[0..<n])
    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, raw.baseAddress, raw.count, 0, $0, peerLength) }
            }
        }
    }
    guard let (header, offset) = try? MessageHeader.decode(datagram), header.sessionID == 0 else {
        say("IGNORED non-PASE datagram of \(n) bytes")
        continue
    }
    let payload = Array(datagram[offset...])
    guard let (protocolHeader, bodyOffset) = try? ProtocolHeader.decode(payload),
        protocolHeader.protocolID == .secureChannel
    else {
        say("IGNORED message without a Secure Channel header")
        continue
    }
    if protocolHeader.isStandaloneAck { continue }
    if let last = lastReceived, last.source == header.sourceNodeID, last.counter == header.messageCounter {
        if let lastReply { send(lastReply) }  // the peer retransmitted: repeat our answer
        continue
    }
    lastReceived = (header.sourceNodeID, header.messageCounter)
    let body = Array(payload[bodyOffset...])
    guard let opcode = MatterSecurity.SecureChannelOpcode(rawValue: protocolHeader.opcode) else { continue }
    if opcode == .pbkdfParamRequest {
        responder = PASEResponder(
            verifier: verifier, salt: salt, iterations: iterations, localSessionID: UInt16.random(in: 1...0xFFFE),
            sessionParameters: SessionParameters(idleInterval: 500, activeInterval: 300, activeThreshold: 4000))
        exchangeID = protocolHeader.exchangeID
        say("RECEIVED PBKDFParamRequest exchange=\(exchangeID)")
    }
    guard var machine = responder, protocolHeader.exchangeID == exchangeID else { continue }
    let effects = machine.receive(opcode, body)
    responder = machine
    for effect in effects {
        switch effect {
        case .send(let message):
            counter &+= 1
            var out = MessageHeader(sessionID: 0, messageCounter: counter)
            if let source = header.sourceNodeID { out.destination = .node(source) }
            let reply = ProtocolHeader(
                isInitiator: false, needsAck: true, ackedCounter: protocolHeader.needsAck ? header.messageCounter : nil,
                opcode: message.opcode.rawValue, exchangeID: exchangeID, protocolID: .secureChannel)
            let bytes = out.encoded() + reply.encoded() + message.payload
            lastReply = bytes
            send(bytes)
        case .established(let session):
            established = true
            say("PASE ESTABLISHED localSession=\(session.localSessionID) peerSession=\(session.peerSessionID)")
        case .failed(let error):
            say("PASE FAILED \(error)")
        }
    }
    if established && !options.stay { break }
}
close(fd)
say(established ? "DONE" : "TIMEOUT")
exit(established ? 0 : 1)
