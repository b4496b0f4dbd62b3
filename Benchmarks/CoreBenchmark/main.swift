// Benchmarks of the observer core (issue 3). Prints figures; asserts nothing.
//
//     swift run -c release core-benchmark
//
// Results and the machine they came from are recorded in docs/BENCHMARKS.md.
import DriverAPI
import Foundation
import HomeCore
import HomeModel
import HashTreeCollections
import Prometheus
import Synchronization

/// Prints a line at once (stdout to a pipe is otherwise block-buffered).
func say(_ line: String = "") { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

// MARK: - Helpers

/// Resident set size of this process, in bytes (from /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A multisensor: Temperature Sensor + Humidity Sensor, each with Identify: 2 device types, 4 traits.
func multisensor(_ i: Int) -> DeviceDescription {
    DeviceDescription(
        localID: "s\(i)", name: "Sensor \(i)",
        types: [
            DeviceTypeDescription(
                id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                traits: [
                    IdentifyTrait.identifier: [:],
                    TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(2000)],
                ]),
            DeviceTypeDescription(
                id: HumiditySensorDeviceType.identifier,
                traits: [
                    IdentifyTrait.identifier: [:],
                    RelativeHumidityMeasurementTrait.identifier: [RelativeHumidityMeasurementTrait.Attribute.measuredValue: .int(4000)],
                ]),
        ], commission: CommissionHint(name: "Sensor \(i)", room: "Room \(i % 20)"))
}

func populate(_ core: HomeCore, devices: Int) -> any DriverContext {
    let driver = core.context(for: "bench")
    for i in 0..<devices { driver.publish(multisensor(i)) }
    return driver
}

let temperature = TemperatureMeasurementTrait.identifier
let measured = TemperatureMeasurementTrait.Attribute.measuredValue

/// Reports per second into a core with `devices` devices, over `count` reports that all change a value.
func ingestRate(_ core: HomeCore, _ driver: any DriverContext, devices: Int, count: Int) -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for n in 0..<count {
        let i = n % devices
        // The value changes on every report (2001…2999), so every report is a real change.
        driver.report([AttributeReport(localID: "s\(i)", trait: temperature, attribute: measured, value: .int(Int64(2001 + n % 999)))])
    }
    let elapsed = clock.now - start
    return Double(count) / (Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
}

func format(_ x: Double) -> String { String(format: "%.0f", x) }
func ms(_ d: Duration) -> String {
    String(format: "%.3f ms", Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15)
}

// MARK: - State machine alone

/// Reports per measurement (REPORTS=… to change).
let reports = Int(ProcessInfo.processInfo.environment["REPORTS"] ?? "") ?? 1_000_000

/// Which parts run (PARTS=1 for ingest alone, e.g. under a profiler); all by default.
let parts = Set((ProcessInfo.processInfo.environment["PARTS"] ?? "3,0,1,2").split(separator: ",").map(String.init))

say("Hearth core benchmark — \(ProcessInfo.processInfo.activeProcessorCount) cores")
say("")

// MARK: - Memory

if parts.contains("3") {
say("3. Memory (resident set size; measured first, in a fresh process, so freed memory is not reused)")
do {
    let rssBefore = residentBytes()
    let core = HomeCore()
    _ = core.state
    say("   idle core: process RSS \(residentBytes() / 1024) KiB (\((residentBytes() - rssBefore) / 1024) KiB more than before the core)")
    for n in [1_000, 10_000] {
        let rss0 = residentBytes()
        let c = HomeCore()
        let driver = populate(c, devices: n)
        // One round of reports so every sensor has a fresh value.
        for i in 0..<n {
            driver.report([AttributeReport(localID: "s\(i)", trait: temperature, attribute: measured, value: .int(2100))])
        }
        let rss1 = residentBytes()
        say("   \(n) devices (2 device types, 4 traits each): \((rss1 - rss0) / n) bytes per device")
        withExtendedLifetime(c) {}
    }
    withExtendedLifetime(core) {}
}
say("")
}

if parts.contains("0") {
say("0. The pure state machine alone (HomeState.apply, no lock, no observers), 10,000 devices")
do {
    var state = HomeState()
    for i in 0..<10_000 { _ = try? state.apply(.publish(plugin: "bench", multisensor(i)), catalog: .standard) }
    let clock = ContinuousClock()
    let count = reports
    let ids = (0..<10_000).map { "s\($0)" }
    let start = clock.now
    for n in 0..<count {
        let r = AttributeReport(localID: ids[n % 10_000], trait: temperature, attribute: measured, value: .int(Int64(2001 + n % 999)))
        _ = try? state.apply(.report(plugin: "bench", [r], at: UInt64(n)), catalog: .standard)
    }
    let elapsed = clock.now - start
    let rate = Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    say("   \(format(rate)) reports/s")
}
say("")
}

// MARK: - Ingest

if parts.contains("1") {
say("1. Ingest: attribute reports per second into a core with 10,000 devices")
do {
    let core = HomeCore()
    let driver = populate(core, devices: 10_000)
    _ = ingestRate(core, driver, devices: 10_000, count: 50_000)  // warm-up
    let none = ingestRate(core, driver, devices: 10_000, count: reports)
    say("   no subscriber:                              \(format(none)) reports/s")

    // The same with hearthd's Prometheus registry counting every report (as /metrics does).
    let counted = HomeCore(metrics: HomeMetrics(factory: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())))
    let countedDriver = populate(counted, devices: 10_000)
    _ = ingestRate(counted, countedDriver, devices: 10_000, count: 50_000)  // warm-up
    let withMetrics = ingestRate(counted, countedDriver, devices: 10_000, count: reports)
    say("   no subscriber, Prometheus metrics on:       \(format(withMetrics)) reports/s  (ratio \(String(format: "%.2f", withMetrics / none)))")

    // 100 batched() and 100 stream() subscribers on devices(), each drained by its own task.
    let home = core.home(for: .system)
    var tasks: [Task<Void, Never>] = []
    for _ in 0..<100 { tasks.append(Task { for await _ in home.devices().batched() {} }) }
    for _ in 0..<100 { tasks.append(Task { for await _ in home.devices().stream() {} }) }
    while core.observerCount < 200 { await Task.yield() }
    let with200 = ingestRate(core, driver, devices: 10_000, count: reports)
    say("   100 batched() + 100 stream() on devices():  \(format(with200)) reports/s  (ratio \(String(format: "%.2f", with200 / none)))")

    // The harder case: 200 subscribers on the very devices being reported (device(id:)),
    // so every report is delivered to a subscriber's buffer.
    for t in tasks { t.cancel() }
    while core.observerCount > 0 { await Task.yield() }
    for i in 0..<200 {
        tasks.append(Task { for await _ in home.device(id: DeviceID(plugin: "bench", local: "s\(i)")) {} })
    }
    while core.observerCount < 200 { await Task.yield() }
    let hot = ingestRate(core, driver, devices: 200, count: reports)
    say("   200 device(id:) subscribers, reports to those 200 devices: \(format(hot)) reports/s  (ratio \(String(format: "%.2f", hot / none)))")
    for t in tasks { t.cancel() }
}
}

// MARK: - Fan-out latency

if parts.contains("2") {
say("")
say("2. Fan-out latency: report → delivery to 100 subscribers at 1,000 reports/s (5,000 reports)")
do {
    let core = HomeCore()
    let driver = populate(core, devices: 1_000)
    let home = core.home(for: .system)
    let clock = ContinuousClock()
    let total = 5_000
    let sent = Mutex<[Int: ContinuousClock.Instant]>([:])
    let latencies = Mutex<[Duration]>([])
    latencies.withLock { $0.reserveCapacity(total * 100) }
    var tasks: [Task<Void, Never>] = []
    for _ in 0..<100 {
        tasks.append(Task.detached {
            var seen = 0
            for await device in home.device(id: "bench:s0") {
                let now = clock.now
                guard let v = device.snapshot.primaryType?.traits[temperature]?[measured]?.intValue, v >= 10_000 else { continue }
                let seq = Int(v - 10_000)
                if let t = sent.withLock({ $0[seq] }) { latencies.withLock { $0.append(now - t) } }
                seen += 1
                if seq == total - 1 { break }
            }
        })
    }
    while core.observerCount < 100 { await Task.yield() }
    var next = clock.now
    for seq in 0..<total {
        next = next.advanced(by: .milliseconds(1))
        try? await clock.sleep(until: next)
        sent.withLock { $0[seq] = clock.now }
        driver.report([AttributeReport(localID: "s0", trait: temperature, attribute: measured, value: .int(Int64(10_000 + seq)))])
    }
    for t in tasks { await t.value }
    let sorted = latencies.withLock { $0.sorted() }
    let p50 = sorted[sorted.count / 2]
    let p99 = sorted[sorted.count * 99 / 100]
    say("   deliveries: \(sorted.count) (of \(total * 100); a slow subscriber coalesces to the newest)")
    say("   p50 \(ms(p50))   p99 \(ms(p99))   max \(ms(sorted.last!))")
}

}
