// Fuzzes the Matter TLV decoder: `matter-tlv-fuzz [--count N] [--seed S]`.
// Exits 1 if any input crashed the round-trip property or took too long.
import MatterTLV
import MatterTLVFuzz
#if canImport(Glibc)
import Glibc
#endif

let options = FuzzCommandLine(tool: "matter-tlv-fuzz")
let count = options.count, seed = options.seed

let clock = ContinuousClock()
let start = clock.now
var fuzzer = TLVFuzzer(seed: seed)
let report = fuzzer.run(count: count) { print("… \($0)") }
print("seed=\(seed) \(report) in \(clock.now - start)")
for failure in report.failures { print("FAIL: \(failure)") }
exit(report.failures.isEmpty && report.inputs == count ? 0 : 1)
