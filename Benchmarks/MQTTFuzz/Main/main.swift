// mqtt-fuzz: a bounded, seeded random-input run over the MQTT plugin's discovery configs,
// templates and JSON payloads and over the isolated-plugin wire protocol (#14). Nothing may
// crash or hang; a crash ends this process with a signal, a hang aborts it with the input.
//
//   swift run -c release mqtt-fuzz --count 1000000 [--seed N]
//
// Prints figures; exits 0 when every input was handled.
import Foundation
import MQTTFuzz

var options = MQTTFuzzer.Options(count: 1_000_000)
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--count": options.count = arguments.popFirst().flatMap { Int($0) } ?? options.count
    case "--seed": options.seed = arguments.popFirst().flatMap { UInt64($0) } ?? options.seed
    case "--hang-seconds": options.hangSeconds = arguments.popFirst().flatMap { Double($0) } ?? options.hangSeconds
    default:
        FileHandle.standardError.write(Data("usage: mqtt-fuzz [--count N] [--seed N] [--hang-seconds S]\n".utf8))
        exit(2)
    }
}
options.corpus = MQTTFuzzer.fixtureCorpus()
print("mqtt-fuzz: \(options.count) inputs, seed \(options.seed), \(options.corpus.count) vendor fixtures as corpus")
var fuzzer = MQTTFuzzer(options: options)
let report = fuzzer.run { print("mqtt-fuzz: … \($0)") }
print("mqtt-fuzz: \(report)")
