import Foundation
import MQTTFuzz
import Testing

/// A short run of `mqtt-fuzz` (the full one is `swift run -c release mqtt-fuzz --count 1000000`):
/// discovery configs, templates, JSON payloads and wire-protocol messages, in a child process
/// so that a crash or a hang (the watchdog aborts) fails this test instead of the test run.
@Suite struct FuzzTests {
    @Test func fiveThousandHostileInputs_neitherCrashNorHang() async {
        await #expect(processExitsWith: .success) {
            var options = MQTTFuzzer.Options(count: 5_000, seed: 14)
            options.corpus = MQTTFuzzer.fixtureCorpus()
            options.hangSeconds = 20
            var fuzzer = MQTTFuzzer(options: options)
            let report = fuzzer.run()
            #expect(report.inputs == 5_000)
            // The generator must reach past the parsers' first checks, or the run proves little.
            #expect(report.accepted > 250, "\(report)")
            #expect(report.refused > 250, "\(report)")
        }
    }
}
