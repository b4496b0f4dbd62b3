// mqtt-benchmark: broker → core throughput and publish → observer latency of the MQTT plugin,
// side by side with a plain libmosquitto subscriber on the same broker (the ceiling).
//
//   swift run -c release mqtt-benchmark [messages] [latency-samples]
//   mqtt-benchmark e2e --hearthd NAME=PATH[@QUERY] …   (through a real hearthd; EndToEnd.swift)
//
// Starts its own mosquitto on a free 127.0.0.1 port. Prints figures; asserts nothing.
import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import MQTTPlugin
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

if CommandLine.arguments.dropFirst().first == "e2e" {
    // MQTT → hearthd → WebSocket observer against a plain subscriber (EndToEnd.swift).
    try await EndToEnd.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let messageCount = arguments.first ?? 100_000
let latencySamples = arguments.dropFirst().first ?? 2_000

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("mqtt-benchmark: \(message)\n".utf8))
    exit(1)
}

func progress(_ message: String) { FileHandle.standardError.write(Data("mqtt-benchmark: \(message)\n".utf8)) }

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

// MARK: Broker

func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

let port = freePort()
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-mqtt-bench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let configFile = directory.appendingPathComponent("mosquitto.conf")
try """
    listener \(port) 127.0.0.1
    allow_anonymous true
    persistence false
    log_dest none
    max_queued_messages 0
    """.write(to: configFile, atomically: true, encoding: .utf8)
let broker = Process()
broker.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
broker.arguments = ["-c", configFile.path]
do { try broker.run() } catch { fail("cannot start mosquitto: \(error)") }
defer {
    kill(broker.processIdentifier, SIGKILL)
    try? FileManager.default.removeItem(at: directory)
}

/// Connects a client, retrying until the broker listens; returns once connected.
func connect(
    _ id: String, subscribed: AsyncStream<Int32>.Continuation? = nil,
    onMessage: @escaping @Sendable (String, UnsafeRawBufferPointer) -> Void = { _, _ in }
) async throws -> MQTTConnection {
    let (connected, continuation) = AsyncStream<Void>.makeStream()
    var handlers = MQTTConnection.Handlers()
    handlers.connected = { continuation.yield() }
    handlers.subscribed = { subscribed?.yield($0) }
    handlers.message = { topic, payload, _ in onMessage(topic, payload) }
    var options = MQTTConnection.Options(host: "127.0.0.1", port: port, clientID: id)
    options.reconnectDelay = (1, 1)
    let c = try MQTTConnection(options: options, handlers: handlers)
    try c.start()
    for await _ in connected { break }
    return c
}

// MARK: The two receivers

/// The value each message carries: distinct from its neighbours, and a sentinel for the last one.
func temperature(_ i: Int) -> Double { Double(i % 30_000 - 5_000) / 100 }  // −50.00…249.99 °C, exact round trips
let sentinel = 300.0
let topic = "bench/thermometer"

/// What a receiver saw: arrival times by value, and the count.
final class Arrivals: Sendable {
    let state = Mutex<(count: Int, times: [Double: UInt64], waiters: [(Double, CheckedContinuation<UInt64, Never>)])>((0, [:], []))

    func record(_ value: Double) {
        let t = now()
        let ready = state.withLock { s -> [CheckedContinuation<UInt64, Never>] in
            s.count += 1
            s.times[value] = t
            let ready = s.waiters.filter { $0.0 == value }.map(\.1)
            s.waiters.removeAll { $0.0 == value }
            return ready
        }
        for c in ready { c.resume(returning: t) }
    }

    func wait(for value: Double) async -> UInt64 {
        await withCheckedContinuation { c in
            let seen = state.withLock { s -> UInt64? in
                if let t = s.times[value] { return t }
                s.waiters.append((value, c))
                return nil
            }
            if let seen { c.resume(returning: seen) }
        }
    }

    func reset() { state.withLock { $0 = (0, [:], []) } }
    var count: Int { state.withLock { $0.count } }
}

progress("mosquitto on 127.0.0.1:\(port)")
let plainArrivals = Arrivals()
let coreArrivals = Arrivals()
let pluginArrivals = Arrivals()

/// A host that only notes the reported temperature: the plugin's own cost, without the core.
final class NoteTakingContext: DriverContext {
    let pluginID = "mqtt"
    let configuration: PluginConfiguration
    let published = Mutex(false)
    init(configuration: PluginConfiguration) { self.configuration = configuration }
    func publish(_ device: DeviceDescription) { published.withLock { $0 = true } }
    func remove(device localID: String) {}
    func report(_ reports: [AttributeReport]) {
        for r in reports where r.attribute == TemperatureMeasurementTrait.Attribute.measuredValue {
            if let v = r.value.intValue { pluginArrivals.record(Double(v) / 100) }
        }
    }
    func emit(_ event: EventReport) {}
    func setConnectivity(_ state: ConnectivityState, device localID: String?) {}
    func log(_ level: LogLevel, _ message: String, device localID: String?) {}
    func count(_ name: String, by amount: Int) {}
}

// The ceiling: a plain libmosquitto subscriber that parses nothing beyond the number.
let (plainAcks, plainAcksContinuation) = AsyncStream<Int32>.makeStream()
let plain = try await connect("bench-plain", subscribed: plainAcksContinuation) { _, payload in
    // {"t":12.34}: the number between ':' and '}'.
    let text = String(decoding: payload, as: UTF8.self)
    if let colon = text.firstIndex(of: ":"), let value = Double(text[text.index(after: colon)...].dropLast()) {
        plainArrivals.record(value)
    }
}
try plain.subscribe(topic, qos: 1)
for await _ in plainAcks { break }
progress("plain subscriber ready")

// Hearth: the MQTT plugin reporting into the observer core; an observer on the device.
var logger = Logger(label: "bench")
logger.logLevel = .error
let core = HomeCore(logger: logger)
let configuration = PluginConfiguration(
    value: ["broker": ["host": "127.0.0.1", "port": .int(Int64(port)), "clientID": "bench-hearth"]], file: "bench", keyPath: "plugins.mqtt")
let plugin = MQTTPlugin()
let context = core.context(for: "mqtt", configuration: configuration)
let pluginTask = Task { try await plugin.run(context: context) }
let bare = MQTTPlugin()
let bareContext = NoteTakingContext(
    configuration: PluginConfiguration(
        value: ["broker": ["host": "127.0.0.1", "port": .int(Int64(port)), "clientID": "bench-plugin-only"]], file: "bench", keyPath: "plugins.mqtt"))
let bareTask = Task { try await bare.run(context: bareContext) }

let publisher = try await connect("bench-publisher")
try publisher.publish(
    "homeassistant/sensor/bench/thermometer/config",
    payload: #"{"name": "Bench", "stat_t": "bench/thermometer", "val_tpl": "{{ value_json.t }}", "dev_cla": "temperature", "unit_of_meas": "°C", "uniq_id": "bench-thermometer"}"#,
    qos: 1, retain: true)

let home = core.home(for: .system)
let deviceID = DeviceID(plugin: "mqtt", local: "bench-thermometer")
// Wait until the device exists and the plugin is subscribed to its state topic.
while !plugin.acknowledgedSubscriptions.contains(topic) || !bare.acknowledgedSubscriptions.contains(topic)
    || (try? home.currentDevice(id: deviceID)) == nil
{
    try await Task.sleep(for: .milliseconds(1))
}

// The observer subscribes once the device exists (a subscription to a missing device ends at once).
let observer = Task {
    for await device in home.device(id: deviceID) {
        if let v = device.types.current(TemperatureSensorDeviceType.self)?.matterTraits.temperatureMeasurementTrait?.attributes.measuredValue {
            coreArrivals.record(Double(v) / 100)
        }
    }
}
progress("plugin ready")

func payload(_ value: Double) -> String { #"{"t":\#(value)}"# }

// MARK: Latency: one message at a time, both receivers awaited.

var plainLatencies: [Double] = []
var coreLatencies: [Double] = []
var pluginLatencies: [Double] = []
for i in 0..<latencySamples {
    let value = temperature(i + 7)
    let sent = now()
    try publisher.publish(topic, payload: payload(value), qos: 0)
    let p = await plainArrivals.wait(for: value)
    let c = await coreArrivals.wait(for: value)
    let b = await pluginArrivals.wait(for: value)
    if i >= 100 {  // warm-up excluded
        plainLatencies.append(Double(p - sent) / 1000)
        coreLatencies.append(Double(c - sent) / 1000)
        pluginLatencies.append(Double(b - sent) / 1000)
    }
    plainArrivals.reset()
    coreArrivals.reset()
    pluginArrivals.reset()
}

func percentile(_ xs: [Double], _ p: Double) -> Double {
    let sorted = xs.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

progress("latency measured")

// MARK: Throughput: a burst of messages, timed until each receiver has the last one.

let rejectedBefore = core.rejectedInputCount
let start = now()
for i in 0..<(messageCount - 1) {
    while true {
        do {
            try publisher.publish(topic, payload: payload(temperature(i)), qos: 0)
            break
        } catch {
            await Task.yield()  // libmosquitto's outgoing queue is full: let it drain
        }
    }
}
try publisher.publish(topic, payload: payload(sentinel), qos: 0)
let plainDone = await plainArrivals.wait(for: sentinel)
let coreDone = await coreArrivals.wait(for: sentinel)
let pluginDone = await pluginArrivals.wait(for: sentinel)
let pluginRate = Double(messageCount) / (Double(pluginDone - start) / 1e9)
let plainRate = Double(messageCount) / (Double(plainDone - start) / 1e9)
let coreRate = Double(messageCount) / (Double(coreDone - start) / 1e9)

observer.cancel()
pluginTask.cancel()
bareTask.cancel()
_ = try? await pluginTask.value
_ = try? await bareTask.value
plain.stop()
publisher.stop()

// MARK: The plugin's own work per message, in-process (no broker, no threads).

let cpuPerMessage: Double = {
    var registry = MQTTPlugin.benchmarkRegistry()
    let n = 200_000
    let payloads = (0..<1000).map { Array(payload(temperature($0)).utf8) }
    let t0 = now()
    var reports = 0
    for i in 0..<n { reports += MQTTPlugin.benchmarkReceive(&registry, topic: topic, payload: payloads[i % 1000]) }
    precondition(reports == n)
    return Double(now() - t0) / Double(n) / 1000
}()

// The core's work per report, in-process: the same device, reports from the plugin's context.
let corePerReport: Double = {
    let quiet = HomeCore(logger: logger)
    let context = quiet.context(for: "mqtt")
    context.publish(
        DeviceDescription(
            localID: "t", name: "T",
            types: [DeviceTypeDescription(id: TemperatureSensorDeviceType.identifier, isPrimary: true, traits: [TemperatureMeasurementTrait.identifier: [:]])]))
    let n = 200_000
    let t0 = now()
    for i in 0..<n {
        context.report([
            AttributeReport(
                localID: "t", deviceType: TemperatureSensorDeviceType.identifier, trait: TemperatureMeasurementTrait.identifier,
                attribute: TemperatureMeasurementTrait.Attribute.measuredValue, value: .int(Int64(i % 30_000 - 5_000)))
        ])
    }
    return Double(now() - t0) / Double(n) / 1000
}()

func f(_ x: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", x) }
print("""
    MQTT broker → core, mosquitto on 127.0.0.1:\(port), \(messageCount) messages (QoS 0), \(latencySamples - 100) latency samples

                          messages/s   p50 latency   p99 latency
    plain subscriber      \(f(plainRate).padding(toLength: 12, withPad: " ", startingAt: 0)) \(f(percentile(plainLatencies, 0.5), 1)) µs       \(f(percentile(plainLatencies, 0.99), 1)) µs
    plugin alone          \(f(pluginRate).padding(toLength: 12, withPad: " ", startingAt: 0)) \(f(percentile(pluginLatencies, 0.5), 1)) µs       \(f(percentile(pluginLatencies, 0.99), 1)) µs
    hearth core           \(f(coreRate).padding(toLength: 12, withPad: " ", startingAt: 0)) \(f(percentile(coreLatencies, 0.5), 1)) µs       \(f(percentile(coreLatencies, 0.99), 1)) µs
    core / plain          \(f(coreRate / plainRate * 100, 1)) %       +\(f(percentile(coreLatencies, 0.5) - percentile(plainLatencies, 0.5), 1)) µs      +\(f(percentile(coreLatencies, 0.99) - percentile(plainLatencies, 0.99), 1)) µs

    the plugin's own work (parse, template, map) per message, in-process: \(f(cpuPerMessage, 2)) µs
    the core's work per report (no observer), in-process: \(f(corePerReport, 2)) µs
    plugin alone: the plugin reporting to a host that only notes the value (no core), for the breakdown
    plain subscriber received \(plainArrivals.count) of \(messageCount), the plugin alone \(pluginArrivals.count); the core refused \(core.rejectedInputCount - rejectedBefore) reports; the plugin refused \(plugin.malformedPayloads.values.reduce(0, +)) payloads
    """)
