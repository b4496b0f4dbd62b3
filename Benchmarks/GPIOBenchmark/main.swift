// gpio-benchmark: edge → observer latency and the edge rate one input sustains.
//
// Drives input lines and measures what reaches an observer of a real HomeCore (a `Home.events()`
// subscriber) through the GPIO plugin:
//   latency   = observer receipt time − the edge's kernel timestamp (p50/p99), for debounce 0 and
//               for a software debounce (reported beyond the debounce window);
//   sustained = the highest paced edge rate at which every edge arrived as a Switch event.
// On a gpio-sim chip (GPIO_SIM_CHIP/GPIO_SIM_SYSFS set, i.e. inside ../shared/tools/with-gpio-sim)
// edges are made by writing the sim's `pull` attribute; the in-memory simulated chip runs as
// the baseline in the same process.
//
//   scripts/bench-gpio                  # boots the VM and runs this inside it
//   swift run -c release gpio-benchmark # simulated baseline only (no gpio-sim here)
import DriverAPI
import Foundation
import GPIOKit
import HomeCore
import HomeModel
import Synchronization

/// Prints a line at once (stdout is a pipe inside the VM: `print` would hold it back).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// Makes edges on one line.
protocol EdgeSource: Sendable {
    var name: String { get }
    var chip: String { get }
    func set(_ line: Int, high: Bool) throws
}

struct KernelSim: EdgeSource {
    let chip: String
    let sysfs: String
    var name: String { "gpio-sim (kernel \(ProcessInfo.processInfo.operatingSystemVersionString))" }
    func set(_ line: Int, high: Bool) throws {
        let fd = open("\(sysfs)/sim_gpio\(line)/pull", O_WRONLY)
        guard fd >= 0 else { throw GPIOError(.io, "cannot open sim_gpio\(line)/pull") }
        defer { close(fd) }
        let text = high ? "pull-up" : "pull-down"
        _ = text.withCString { write(fd, $0, strlen($0)) }
    }
}

struct InMemory: EdgeSource {
    let simulator: GPIOSimulator
    var name: String { "simulated chip (in memory, baseline)" }
    var chip: String { "sim0" }
    func set(_ line: Int, high: Bool) throws { try simulator.setPull(chip: "sim0", offset: line, high: high) }
}

/// Runs the plugin on `source` with one button per configuration and returns the home to observe.
func startPlugin(_ source: any EdgeSource, simulator: GPIOSimulator, buttons: [(line: Int, debounce: String)]) async throws
    -> (Home, Task<Void, any Error>)
{
    let core = HomeCore()
    var lines: [Value] = []
    for b in buttons {
        lines.append([
            "id": .string("b\(b.line)"), "chip": .string(source.chip), "line": .int(Int64(b.line)), "role": "button",
            "debounce": .string(b.debounce), "chatter-guard": false, "multi-press-window": 0, "long-press": "1h", "name": .string("Button \(b.line)"),
            "room": "Bench",
        ])
    }
    var config: [String: Value] = ["lines": .list(lines)]
    if source is InMemory { config["simulated"] = [["chip": "sim0", "lines": 8]] }
    let context = core.context(for: "gpio", configuration: PluginConfiguration(value: .object(config), keyPath: "plugins.gpio"))
    let plugin = GPIODriverPlugin(clock: ContinuousClock(), simulator: simulator)
    try plugin.validate(configuration: context.configuration)
    let task = Task { try await plugin.run(context: context) }
    let home = core.home(for: .system)
    // Ready once every button reported its position.
    for b in buttons {
        let id = DeviceID(plugin: "gpio", local: "b\(b.line)")
        for await set in home.devices().batched() where set[id: id] != nil { break }
        for await d in home.device(id: id) where d.snapshot.primaryType?.traits[SwitchTrait.identifier]?.attributes[SwitchTrait.Attribute.currentPosition] != nil {
            break
        }
    }
    return (home, task)
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

/// Records when each event of a device reaches the observer.
final class Arrivals: Sendable {
    final class Log: Sendable {
        let list = Mutex<[(receivedAt: UInt64, event: DeviceEvent)]>([])
    }

    let log = Log()
    let task: Task<Void, Never>

    init(_ home: Home, _ id: DeviceID) {
        let events = home.events(device: id)
        let log = self.log
        task = Task {
            for await e in events {
                let now = KernelTime.realtimeNanoseconds()
                log.list.withLock { $0.append((now, e)) }
            }
        }
    }

    var snapshot: [(receivedAt: UInt64, event: DeviceEvent)] { log.list.withLock { $0 } }
    var count: Int { log.list.withLock { $0.count } }

    /// Waits (polling: this is a benchmark, not a test) until `count` events arrived or `timeout` passed.
    func wait(for count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while self.count < count {
            if ContinuousClock.now > deadline { return false }
            try? await Task.sleep(for: .microseconds(100))
        }
        return true
    }

    /// Waits until nothing new arrived for `quiet`.
    func settle(quiet: Duration) async {
        var last = -1
        while last != count {
            last = count
            try? await Task.sleep(for: quiet)
        }
    }

    deinit { task.cancel() }
}

/// Edge → observer latency: press and release `count` times, one edge at a time.
///
/// With a debounce window it is measured from the moment the edge was made (just before the
/// `pull` write) plus the window: libgpiod 1.6's kernel stamps the edge itself and the plugin
/// debounces, while with libgpiod 2 the kernel debounces and stamps the event when the window
/// ends; measured from the write, both say the same thing: the time beyond the window.
func latency(_ source: any EdgeSource, _ home: Home, line: Int, debounce: Duration, count: Int) async throws
    -> (p50: Double, p99: Double, max: Double, lost: Int)
{
    let arrivals = Arrivals(home, DeviceID(plugin: "gpio", local: "b\(line)"))
    let debounceNanoseconds = Double(debounce.components.seconds) * 1e9 + Double(debounce.components.attoseconds) / 1e9
    var written: [UInt64] = []
    for i in 0..<(2 * count) {
        written.append(KernelTime.realtimeNanoseconds())
        try source.set(line, high: i % 2 == 0)
        // One edge at a time: the next edge only once this one arrived (or 2 s passed).
        let arrived = await arrivals.wait(for: i + 1, timeout: .seconds(2))
        if !arrived, ProcessInfo.processInfo.environment["GPIO_BENCH_DEBUG"] != nil { say("edge \(i): nothing within 2 s") }
    }
    await arrivals.settle(quiet: .milliseconds(500))
    let lost = 2 * count - arrivals.count
    if ProcessInfo.processInfo.environment["GPIO_BENCH_DEBUG"] != nil {
        say("arrived: \(arrivals.snapshot.map { "\($0.event.event.rawValue)" }.joined(separator: " "))")
    }
    let got = arrivals.snapshot
    var samples: [Double]
    if debounce > .zero, lost == 0 {
        samples = zip(got, written).map { (Double($0.receivedAt) - Double($1) - debounceNanoseconds) / 1000 }
    } else {
        samples = got.map { (Double($0.receivedAt) - Double($0.event.timestampNanoseconds) - debounceNanoseconds) / 1000 }
    }
    samples.sort()
    return (percentile(samples, 0.5), percentile(samples, 0.99), samples.last ?? .nan, lost)
}

/// Sends `edges` edges paced at `rate` per second (0 = as fast as possible); returns the rate
/// achieved and how many Switch events arrived.
func burst(_ source: any EdgeSource, _ home: Home, line: Int, edges: Int, rate: Double) async throws -> (achieved: Double, received: Int) {
    let arrivals = Arrivals(home, DeviceID(plugin: "gpio", local: "b\(line)"))
    let start = KernelTime.monotonicNanoseconds()
    let interval = rate > 0 ? UInt64(1e9 / rate) : 0
    for i in 0..<edges {
        if interval > 0 {
            let due = start + UInt64(i) * interval
            while KernelTime.monotonicNanoseconds() < due {}
        }
        try source.set(line, high: i % 2 == 0)
    }
    let elapsed = Double(KernelTime.monotonicNanoseconds() - start) / 1e9
    await arrivals.settle(quiet: .milliseconds(500))
    if edges % 2 == 1 { try source.set(line, high: false) }
    await arrivals.settle(quiet: .milliseconds(200))
    return (Double(edges) / elapsed, min(edges, arrivals.count))
}

func run(_ source: any EdgeSource, simulator: GPIOSimulator) async throws {
    say("== \(source.name)")
    let debounce = Duration.milliseconds(5)
    let (home, task) = try await startPlugin(source, simulator: simulator, buttons: [(0, "0ms"), (1, "5ms")])
    defer { task.cancel() }
    let count = Int(ProcessInfo.processInfo.environment["GPIO_BENCH_PRESSES"] ?? "") ?? 100
    let plain = try await latency(source, home, line: 0, debounce: .zero, count: count)
    say(String(format: "latency, debounce 0:                   p50 %8.1f µs   p99 %8.1f µs   max %8.1f µs   (%d edges, %d lost)", plain.p50, plain.p99, plain.max, 2 * count, plain.lost))
    let debounced = try await latency(source, home, line: 1, debounce: debounce, count: count / 4)
    let how = GPIOLibrary.current.hasKernelDebounce && !(source is InMemory) ? "kernel" : "software"
    say(String(format: "latency beyond 5 ms \(how) debounce: p50 %8.1f µs   p99 %8.1f µs   max %8.1f µs   (%d edges, %d lost)", debounced.p50, debounced.p99, debounced.max, count / 2, debounced.lost))
    var sustained = 0.0
    for rate in [50.0, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 0] {
        // About two seconds of edges per rate (at least 100, at most 1000).
        let edges = rate > 0 ? min(1000, max(100, Int(rate * 2))) : 1000
        let r = try await burst(source, home, line: 0, edges: edges, rate: rate)
        let lost = edges - r.received
        say(String(format: "burst: target %@ → achieved %8.0f edges/s, received %4d/%d, lost %d",
                     rate > 0 ? String(format: "%6.0f/s", rate) : "   max ", r.achieved, r.received, edges, lost))
        if lost == 0 { sustained = max(sustained, r.achieved) }
    }
    say(String(format: "sustained without loss: %.0f edges/s", sustained))
}

say("gpio-benchmark: \(ProcessInfo.processInfo.processorCount) CPUs, backend \(LibgpiodBackend.description)")
if ProcessInfo.processInfo.environment["GPIO_BENCH_SKIP_BASELINE"] != nil, ProcessInfo.processInfo.environment["GPIO_SIM_CHIP"] != nil {
    try await run(KernelSim(chip: ProcessInfo.processInfo.environment["GPIO_SIM_CHIP"]!, sysfs: ProcessInfo.processInfo.environment["GPIO_SIM_SYSFS"] ?? ""), simulator: GPIOSimulator())
    exit(0)
}
let simulator = GPIOSimulator()
try await run(InMemory(simulator: simulator), simulator: simulator)
let env = ProcessInfo.processInfo.environment
if let chip = env["GPIO_SIM_CHIP"], let sysfs = env["GPIO_SIM_SYSFS"] {
    try await run(KernelSim(chip: chip, sysfs: sysfs), simulator: GPIOSimulator())
} else {
    say("== gpio-sim: skipped (GPIO_SIM_CHIP is not set; scripts/bench-gpio runs this inside a gpio-sim VM)")
}
