// Fuzzes Matter's message header parser, the unsecured/secured message decoders and the PASE and
// CASE message decoders and state machines: `matter-protocol-fuzz [--count N] [--seed S]`.
// Exits 1 if any input took too long (a crash ends the process before the report).
import MatterProtocolFuzz
import MatterTLVFuzz
#if canImport(Glibc)
import Glibc
#endif

let options = FuzzCommandLine(tool: "matter-protocol-fuzz")
let count = options.count, seed = options.seed

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
