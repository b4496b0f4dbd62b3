// Prints PASE and CASE handshake times (both sides in one process, no network): what the
// state machines and their crypto cost. Run in release: swift run -c release matter-security-bench
import Foundation
import MatterSecurity

func measure(_ name: String, runs: Int, _ body: () throws -> Void) rethrows {
    try body()  // warm-up
    let clock = ContinuousClock()
    var samples: [Double] = []
    for _ in 0..<runs {
        let start = clock.now
        try body()
        let d = clock.now - start
        samples.append(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
    }
    samples.sort()
    let mean = samples.reduce(0, +) / Double(samples.count)
    print(String(format: "%@: %d runs, mean %.2f ms, median %.2f ms, p95 %.2f ms", name, runs, mean,
                 samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 95 / 100)]))
}

/// Delivers messages between two handshake sides until neither has anything to send.
func converse<I: HandshakeStateMachine, R: HandshakeStateMachine>(_ first: SecureChannelMessage, _ i: inout I, _ r: inout R) -> Int {
    var toR = [first], established = 0
    for _ in 0..<8 where !toR.isEmpty {
        var toI: [SecureChannelMessage] = []
        for m in toR { for e in r.receive(m.opcode, m.payload) { if case .send(let o) = e { toI.append(o) } else if case .established = e { established += 1 } } }
        toR = []
        for m in toI { for e in i.receive(m.opcode, m.payload) { if case .send(let o) = e { toR.append(o) } else if case .established = e { established += 1 } } }
    }
    return established
}

let salt = Array("SPAKE2P Key Salt".utf8)
let passcode = try SetupPasscode(20_202_021)
let verifier = try Spake2pVerifier(passcode: passcode, salt: salt, iterations: 1000)
try measure("PASE handshake (1000 PBKDF2 iterations)", runs: 50) {
    var responder = PASEResponder(verifier: verifier, salt: salt, iterations: 1000, localSessionID: 2)
    var initiator = PASEInitiator(passcode: passcode, localSessionID: 1)
    let n = converse(try initiator.start(), &initiator, &responder)
    precondition(n == 2, "PASE did not complete")
}

// One fabric: root → ICAC → two NOCs.
let nodes = try DevelopmentFabric.credentials(nodeIDs: [0x11, 0x22])
let a = nodes[0], b = nodes[1]
try measure("CASE handshake (Sigma1/2/3, ICAC chains)", runs: 50) {
    var initiator = CASEInitiator(credentials: a, peerNodeID: b.nodeID, localSessionID: 1)
    var responder = CASEResponder(fabrics: [b], localSessionID: 2)
    let n = converse(try initiator.start(), &initiator, &responder)
    precondition(n == 2, "CASE did not complete")
}
