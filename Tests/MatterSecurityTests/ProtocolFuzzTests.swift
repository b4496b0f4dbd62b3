import MatterProtocolFuzz
import Testing

/// A bounded run of the protocol fuzzer (the million-input run is
/// `matter-protocol-fuzz --count 1000000`, docs/BENCHMARKS.md): message headers, secured and
/// unsecured messages, PASE and CASE payloads, each decoder and state machine returns or throws
/// on every mutated input, within the time limit.
@Suite struct ProtocolFuzzTests {
    @Test func fuzz30kInputs_noCrashNoHang() throws {
        var fuzzer = try ProtocolFuzzer(seed: 20_261_125)
        let report = fuzzer.run(count: 30_000)
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(report.inputs == 30_000)
        // Every decoder got inputs, and both outcomes happened (the corpus itself is valid).
        #expect(report.byTarget.count == 14, "\(report.byTarget)")
        #expect(report.accepted > 1000 && report.refused > 10_000, "\(report)")
    }
}
