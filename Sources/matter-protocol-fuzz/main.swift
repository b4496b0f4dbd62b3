// Fuzzes Matter's message header parser, the unsecured/secured message decoders and the PASE and
// CASE message decoders and state machines: `matter-protocol-fuzz [--count N] [--seed S]`.
// Exits 1 if any input took too long (a crash ends the process before the report).
import MatterProtocolFuzz
#if canImport(Glibc)
import Glibc
#endif

var count = 1_000_000
var seed: UInt64 = 0x4D61_7474_6572
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    switch flag {
    case "--count": count = Int(arguments.popFirst() ?? "") ?? count
    case "--seed": seed = UInt64(arguments.popFirst() ?? "") ?? seed
    default:
        print("usage: matter-protocol-fuzz [--count N] [--seed S]")
        exit(2)
    }
}

let clock = ContinuousClock()
let start = clock.now
do {
    var fuzzer = try ProtocolFuzzer(seed: seed)
    let report = fuzzer.run(count: count) { print("… \($0)") }
    print("seed=\(seed) \(report) in \(clock.now - start)")
    for failure in report.failures { print("FAIL: \(failure)") }
    exit(report.failures.isEmpty && report.inputs == count ? 0 : 1)
} catch {
    print("the fuzzer's corpus could not be made: \(error)")
    exit(1)
}
