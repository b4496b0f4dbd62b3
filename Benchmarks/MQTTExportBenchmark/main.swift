// mqtt-export-benchmark: issue 19's federation figures. Several exporting Hearths (each a core
// with N contact sensors and the MQTT exporter) and one importing Hearth (a core with the real
// libMQTTPlugin.so, loaded with dlopen) share one mosquitto on loopback.
//
//   swift build -c release --product mqtt-export-benchmark --product MQTTPlugin
//   .build/release/mqtt-export-benchmark [exporters=3] [devices=1000] [samples=500] [flood=20000]
//
// 1. Discovery: time from the exporters' start until the importer has every exported device
//    (exporters × devices), and until their configs were all on the broker.
// 2. Edge → observer: a contact sensor's state flips on an exporter (the report a GPIO edge
//    makes through DriverContext, after the GPIO plugin's debounce) and an observer of the
//    importer's core (Home.changedDevices, as the API and web page use) sees the new value.
//    p50/p99 with the population idle, then with every exporter flipping its other sensors
//    in the background.
// 3. Throughput: messages/s one exporter sustains while state reports flood it (flood/10,000
//    seconds), against a plain libmosquitto publisher sending same-sized retained QoS 1
//    messages as fast as it can for as long, in the same run; each counted by a subscriber.
// Prints figures; asserts nothing.
import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import MQTTExport
import PluginHost
import Synchronization
import TestSupport

let numbers = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let exporterCount = numbers.count > 0 ? numbers[0] : 3
let deviceCount = numbers.count > 1 ? numbers[1] : 1000
let sampleCount = numbers.count > 2 ? numbers[2] : 500
let floodCount = numbers.count > 3 ? numbers[3] : 20_000

func say(_ message: String) { FileHandle.standardError.write(Data("mqtt-export-benchmark: \(message)\n".utf8)) }
func fail(_ message: String) -> Never {
    say(message)
    exit(1)
}

LoggingSystem.bootstrap { label in
    var h = StreamLogHandler.standardError(label: label)
    h.logLevel = .error
    return h
}

let library = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    .appendingPathComponent("libMQTTPlugin.so").path
guard FileManager.default.fileExists(atPath: library) else { fail("\(library) is missing: build the MQTTPlugin product too") }

let broker = try await MosquittoBroker()
defer { broker.stop() }
say("mosquitto on 127.0.0.1:\(broker.port); \(exporterCount) exporters × \(deviceCount) contact sensors")

// MARK: Exporting Hearths

/// Counts the discovery configs that reach the broker, to tell the exporters' part of
/// discovery from the importer's.
final class ConfigCount: Sendable {
    let m = Mutex<(count: Int, last: ContinuousClock.Instant?)>((0, nil))
}
let configsOnBroker = ConfigCount()
let configWatch = try MosquittoClient(.init(host: "127.0.0.1", port: broker.port, clientID: "bench-config-watch"))
let (watchReady, watchReadyContinuation) = AsyncStream<Void>.makeStream()
let configWatchTask = Task {
    for await e in configWatch.events {
        switch e {
        case .connected:
            configWatch.subscribe("homeassistant/binary_sensor/+/+/config")
            watchReadyContinuation.yield()
        case .message(_, let payload, _) where !payload.isEmpty:
            configsOnBroker.m.withLock { c in
                c.count += 1
                c.last = ContinuousClock.now
            }
        default: break
        }
    }
}
try configWatch.start()
for await _ in watchReady { break }
try await Task.sleep(for: .milliseconds(300))  // the SUBACK

func contact(_ i: Int, exporter: Int) -> DeviceDescription {
    DeviceDescription(
        localID: "contact-\(i)", name: "Contact \(exporter) \(i)",
        types: [
            DeviceTypeDescription(
                id: ContactSensorDeviceType.identifier, isPrimary: true,
                traits: [IdentifyTrait.identifier: [:], BooleanStateTrait.identifier: [BooleanStateTrait.Attribute.stateValue: .bool(true)]])
        ], commission: CommissionHint(name: "Contact \(exporter) \(i)", room: "Garage"))
}

struct Exporter: Sendable {
    let core: HomeCore
    let driver: any DriverContext
    let service: MQTTExporter
    let task: Task<Void, any Error>
    let node: String
}

let benchmarkStart = ContinuousClock.now
let exporters: [Exporter] = try (0..<exporterCount).map { e in
    let core = HomeCore()
    let driver = core.context(for: "gpio")
    for i in 0..<deviceCount { driver.publish(contact(i, exporter: e)) }
    let node = "hearth_bench_\(e)"
    let settings = try ExposureSettings(store: nil)
    let service = MQTTExporter(core: core, settings: settings, configuration: .init(port: broker.port, nodeID: node))
    return Exporter(core: core, driver: driver, service: service, task: Task { try await service.run() }, node: node)
}

// MARK: Importing Hearth

let importer = HomeCore()
let loaded = try PluginLoader.load(library)
let importService = PluginService(
    loaded, core: importer,
    configuration: PluginConfiguration(
        value: [
            "broker": ["host": "127.0.0.1", "port": .int(Int64(broker.port)), "clientID": "bench-importer"],
            // The plugin keeps 1,024 devices by default; 3 × 1,000 needs more.
            "discovery": ["maximumDevices": .int(Int64(exporterCount * deviceCount + 16)), "maximumEntities": .int(Int64(exporterCount * deviceCount * 2 + 64))],
        ], file: "bench", keyPath: "plugins.mqtt"),
    clock: ContinuousClock(), logger: Logger(label: "bench.import"))
let importTask = Task { try await importService.run() }
let system = importer.home(for: .system)

let total = exporterCount * deviceCount
let discoveredCount = Atomic<Int>(0)
// A set that stops growing never wakes the loop below: the bound is a timer of its own.
let watchdog = Task {
    try await Task.sleep(for: .seconds(600))
    fail("only \(discoveredCount.load(ordering: .relaxed)) of \(total) devices discovered in 10 minutes "
        + "(\(configsOnBroker.m.withLock { $0.count }) configs reached the broker)")
}
var discovered: [HomeDevice] = []
for await set in system.discoveredDevices().batched() {
    discovered = set.filter { $0.name.hasPrefix("Contact ") }
    discoveredCount.store(discovered.count, ordering: .relaxed)
    if discovered.count >= total { break }
}
watchdog.cancel()
let discoveryTime = ContinuousClock.now - benchmarkStart
let (configCount, lastConfig) = configsOnBroker.m.withLock { ($0.count, $0.last) }
let configsTime = lastConfig.map { $0 - benchmarkStart }
say("discovered \(total) devices in \(discoveryTime); \(configCount) configs on the broker after \(configsTime.map { "\($0)" } ?? "-")")
configWatchTask.cancel()
configWatch.stop()

// Commission them on the importer (as its admin would), so its observers see them.
let structure = StructureID(rawValue: "structure-bench")
try system.edit(.createStructure(structure, name: "House"))
let importedID = Dictionary(discovered.map { ($0.name, $0.id) }, uniquingKeysWith: { a, _ in a })
try system.edit(discovered.map { .commission($0.id, name: $0.name, structure: structure, room: nil, primaryType: nil) })

/// What the importer's observer has seen: the newest contact value per device and when.
final class Seen: Sendable {
    struct Entry {
        var value: Bool
        var at: ContinuousClock.Instant
    }
    let m = Mutex<[DeviceID: Entry]>([:])
}
let seen = Seen()
let observer = Task {
    for await changed in system.changedDevices() {
        let now = ContinuousClock.now
        seen.m.withLock { s in
            for d in changed.devices {
                guard let v = d.snapshot.types.first?.traits[BooleanStateTrait.identifier]?[BooleanStateTrait.Attribute.stateValue]?.boolValue else { continue }
                if s[d.id]?.value != v { s[d.id] = .init(value: v, at: now) }
            }
        }
    }
}

// MARK: Edge → observer

var rng = SystemRandomNumberGenerator()
/// Every sensor's current value, per exporter (the benchmark is their only writer).
final class Values: Sendable {
    let m: Mutex<[[Bool]]>
    init() { m = Mutex(Array(repeating: Array(repeating: true, count: deviceCount), count: exporterCount)) }
    func flip(_ e: Int, _ i: Int) -> Bool {
        m.withLock { v in
            v[e][i].toggle()
            return v[e][i]
        }
    }
}
let values = Values()

/// Flips one sensor and waits until the importer's observer has the new value; the latency.
func sample(exporter e: Int, device i: Int) async -> Duration? {
    let value = values.flip(e, i)
    guard let id = importedID["Contact \(e) \(i)"] else { fail("Contact \(e) \(i) was not imported") }
    let start = ContinuousClock.now
    exporters[e].driver.report("contact-\(i)", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(value))
    while ContinuousClock.now - start < .seconds(10) {
        if let entry = seen.m.withLock({ $0[id] }), entry.value == value, entry.at >= start { return entry.at - start }
        try? await Task.sleep(for: .microseconds(200))
    }
    return nil
}

func percentiles(_ label: String, _ samples: [Duration]) {
    let ms = samples.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 }.sorted()
    guard !ms.isEmpty else { return print("\(label): no samples") }
    func p(_ q: Double) -> Double { ms[min(ms.count - 1, Int((Double(ms.count - 1) * q).rounded()))] }
    print(String(format: "%@: n=%d  p50 %.2f ms  p99 %.2f ms  max %.2f ms", label, ms.count, p(0.5), p(0.99), ms.last!))
}

// Wait for the observer's first full read.
try await Task.sleep(for: .seconds(1))
var idle: [Duration] = []
var lost = 0
for _ in 0..<sampleCount {
    if let d = await sample(exporter: Int.random(in: 0..<exporterCount, using: &rng), device: Int.random(in: 0..<deviceCount, using: &rng)) {
        idle.append(d)
    } else {
        lost += 1
    }
}

// The same under background churn: every exporter flips its other sensors at a fixed rate.
let churnPerSecond = 200
let churn = Task {
    var r = SystemRandomNumberGenerator()
    while !Task.isCancelled {
        for e in 0..<exporterCount {
            // Devices 0…9 are the probes; the churn stays off them.
            let i = Int.random(in: 10..<max(11, deviceCount), using: &r)
            exporters[e].driver.report("contact-\(i)", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(values.flip(e, i)))
        }
        try? await Task.sleep(for: .microseconds(1_000_000 / churnPerSecond))
    }
}
var loaded_: [Duration] = []
for _ in 0..<sampleCount {
    if let d = await sample(exporter: Int.random(in: 0..<exporterCount, using: &rng), device: Int.random(in: 0..<min(10, deviceCount), using: &rng)) {
        loaded_.append(d)
    } else {
        lost += 1
    }
}
churn.cancel()
_ = await churn.value

// MARK: Throughput: the exporter against a plain publisher

/// The messages one subscriber has counted (not retained ones) and when the last arrived.
final class Counter: Sendable {
    let m = Mutex<(count: Int, last: ContinuousClock.Instant?)>((0, nil))
    func add() -> Int {
        m.withLock { c in
            c.count += 1
            c.last = ContinuousClock.now
            return c.count
        }
    }
    var count: Int { m.withLock { $0.count } }
}

/// Counts the messages under `pattern` that arrive while `send` runs: a sustained rate when
/// `send` keeps the sender saturated for its whole run.
func count(_ pattern: String, while send: @Sendable () async -> Void) async throws -> (Int, Duration) {
    let client = try MosquittoClient(.init(host: "127.0.0.1", port: broker.port, clientID: "bench-counter-\(UUID().uuidString.prefix(6))"))
    let counter = Counter()
    let (ready, readyContinuation) = AsyncStream<Void>.makeStream()
    let reader = Task {
        for await e in client.events {
            switch e {
            case .connected:
                client.subscribe(pattern)
                readyContinuation.yield()
            case .message(_, _, let retained) where !retained: _ = counter.add()
            default: break
            }
        }
    }
    try client.start()
    var it = ready.makeAsyncIterator()
    _ = await it.next()
    try await Task.sleep(for: .milliseconds(300))  // the SUBACK
    let before = counter.count
    let start = ContinuousClock.now
    await send()
    let elapsed = ContinuousClock.now - start
    let n = counter.count - before
    reader.cancel()
    await client.stop()
    client.continuation.finish()
    return (n, elapsed)
}

func rate(_ n: Int, _ d: Duration) -> Double {
    let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    return s > 0 ? Double(n) / s : 0
}

// The exporter, saturated for `floodSeconds`: reports as fast as they can be made, each a new
// value for the next sensor in turn. The exporter publishes each device's newest state (it
// coalesces what it cannot send yet), so the count is what it sustains, not what was reported.
let floodSeconds = Double(floodCount) / 10_000  // default 20,000 → 2 s
let first = exporters[0]
let reports = Counter()
let (exported, exportTime) = try await count("hearth/\(first.node)/+/state") {
    let end = ContinuousClock.now + .milliseconds(Int(floodSeconds * 1000))
    var k = 0
    while ContinuousClock.now < end {
        let i = 10 + k % max(1, deviceCount - 10)
        first.driver.report("contact-\(i)", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(values.flip(0, i)))
        _ = reports.add()
        k += 1
        if k % 200 == 0 { await Task.yield() }
    }
}
// The plain publisher, saturated for as long: retained QoS 1 messages of the exporter's size.
let plain = try MosquittoClient(.init(host: "127.0.0.1", port: broker.port, clientID: "bench-plain"))
try plain.start()
func connected(_ client: MosquittoClient) async {
    for await e in client.events { if case .connected = e { return } }
}
await connected(plain)
let payload = Array(#"{"contact":"OFF"}"#.utf8)
let (published, plainTime) = try await count("bench/plain/+/state") {
    let end = ContinuousClock.now + .milliseconds(Int(floodSeconds * 1000))
    var k = 0
    while ContinuousClock.now < end {
        plain.publish("bench/plain/contact_\(k % max(1, deviceCount))/state", payload, retain: true)
        k += 1
        if k % 200 == 0 { await Task.yield() }
    }
}
plain.stop()

print("mqtt-export-benchmark: \(exporterCount) exporting Hearths × \(deviceCount) contact sensors → 1 importing Hearth, one mosquitto on loopback")
print("discovery: \(total) devices imported in \(discoveryTime) from the exporters' start (their \(configCount) configs all on the broker after \(configsTime.map { "\($0)" } ?? "-"))")
percentiles("edge → importer observer, idle", idle)
percentiles("edge → importer observer, \(churnPerSecond * exporterCount) background changes/s", loaded_)
if lost > 0 { print("samples not seen within 10 s: \(lost)") }
print(String(format: "exporter (saturated): %d state messages (%d reports) in %.2f s = %.0f msg/s", exported, reports.count,
    Double(exportTime.components.seconds) + Double(exportTime.components.attoseconds) / 1e18, rate(exported, exportTime)))
print(String(format: "plain publisher (saturated): %d messages received in %.2f s = %.0f msg/s", published,
    Double(plainTime.components.seconds) + Double(plainTime.components.attoseconds) / 1e18, rate(published, plainTime)))
print(String(format: "exporter / plain: %.2f", rate(published, plainTime) > 0 ? rate(exported, exportTime) / rate(published, plainTime) : 0))

observer.cancel()
importTask.cancel()
for e in exporters { e.task.cancel() }
broker.stop()  // exit() skips the top-level defer
exit(0)
