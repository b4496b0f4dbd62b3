// Prints Matter protocol figures (docs/BENCHMARKS.md): secured message encrypt+decrypt per
// second, and TLV encode/decode throughput. Build with -c release.
import MatterMessaging
import MatterTLV

let clock = ContinuousClock()

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

func measure(_ label: String, iterations: Int, bytesPerIteration: Int? = nil, _ body: () throws -> Void) rethrows {
    for _ in 0..<max(1, iterations / 20) { try body() }  // warm up
    let start = clock.now
    for _ in 0..<iterations { try body() }
    let s = seconds(clock.now - start)
    var line = "\(label): \(iterations) in \(format3(s)) s = \(Int(Double(iterations) / s)) /s"
    if let b = bytesPerIteration { line += ", \(format3(Double(b * iterations) / s / 1_000_000)) MB/s" }
    print(line)
}

func format3(_ v: Double) -> String {
    let scaled = (v * 1000).rounded() / 1000
    return "\(scaled)"
}

// MARK: Messages

let key = try AESCCMKey(Array(0..<16))
let privacy = try MessageSecurity.privacyKey(for: Array(0..<16))
for size in [64, 512, 1024] {
    let payload = [UInt8](repeating: 0x5A, count: size)
    var counter: UInt32 = 1
    let ph = ProtocolHeader(isInitiator: true, needsAck: true, opcode: 2, exchangeID: 1, protocolID: .interactionModel)
    for (name, pk) in [("", nil), (" +privacy", privacy)] as [(String, AESCCMKey?)] {
        try measure("message encrypt+decrypt, \(size)-byte payload\(name)", iterations: 100_000) {
            counter &+= 1
            let header = MessageHeader(sessionID: 7, messageCounter: counter)
            let d = MessageCodec.encodeSecured(header, ph, payload, key: key, nonceNodeID: 0, privacyKey: pk)
            let (_, _, p) = try MessageCodec.decodeSecured(d, key: key, nonceNodeID: 0, privacyKey: pk)
            precondition(p.count == size)
        }
    }
}

// MARK: TLV

/// An attribute-report-like document: a list of structures with paths, integers, strings and octets.
func reportEntry(_ i: Int) -> TLVElement {
    let path: TLVElement = .list(.context(1), [TLVElement(.context(2), .unsigned(1)), TLVElement(.context(3), .unsigned(0x0402)),
                                              TLVElement(.context(4), .unsigned(0))])
    var members: [TLVElement] = [TLVElement(.context(0), .unsigned(UInt64(i) * 1_000_003)), path]
    members.append(TLVElement(.context(2), .signed(-Int64(i) * 77)))
    members.append(TLVElement(.context(3), .utf8("Living Room sensor \(i)")))
    members.append(TLVElement(.context(4), .bytes([UInt8](repeating: UInt8(i), count: 16))))
    members.append(TLVElement(.context(5), .bool(i % 2 == 0)))
    return .structure(members)
}
let entries: [TLVElement] = (0..<24).map(reportEntry)
let document: TLVElement = .structure([TLVElement(.context(0), .array(entries)), TLVElement(.context(255), .unsigned(12))])
let encoded = try document.encoded()
print("TLV document: \(encoded.count) bytes")
try measure("TLV encode (TLVElement → bytes)", iterations: 20_000, bytesPerIteration: encoded.count) {
    let e = try document.encoded()
    precondition(e.count == encoded.count)
}
try measure("TLV decode (bytes → TLVElement)", iterations: 20_000, bytesPerIteration: encoded.count) {
    let d = try TLVElement(decoding: encoded)
    precondition(d.isContainer)
}
try measure("TLV streaming read (TLVReader tokens)", iterations: 20_000, bytesPerIteration: encoded.count) {
    var r = try TLVReader(encoded)
    var n = 0
    while try r.next() != nil { n += 1 }
    precondition(n > 0)
}
