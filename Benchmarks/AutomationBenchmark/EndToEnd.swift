// The issue's end-to-end figures, in-process with the real plugins:
//
//   edge → relay:  a button line pulled high on the simulated GPIO chip → the GPIO plugin → the
//                  core → the tap → the engine → Toggle through the normal command path → the GPIO
//                  plugin drives the relay line, read back from the chip (polled every ~50–100 µs);
//   MQTT → MQTT:   a sensor message published on a real mosquitto → the MQTT plugin → the core →
//                  an automation (`above` with hysteresis) → `On` for an MQTT switch → its command
//                  topic, received by a plain subscriber on the same broker;
//
// with 0, 100 and 1,000 other automations loaded (each an attribute starter on one of 100
// MQTT thermometers that never fires), without and with 1,000 MQTT reports/s to those
// thermometers in the background. Prints figures; asserts nothing.
import DriverAPI
import Foundation
import GPIOKit
import HomeAutomation
import HomeCore
import HomeModel
import Logging
import MQTTPlugin
import Synchronization

/// Hands the core's commands to a plugin running in this process (hearthd's plugin host does
/// the same across its boundary).
final class InProcess: CommandHandler {
    let plugin: any DriverPlugin
    let context: any DriverContext
    init(_ plugin: any DriverPlugin, _ context: any DriverContext) {
        self.plugin = plugin
        self.context = context
    }
    func handle(_ command: DriverCommand) async throws -> Value { try await plugin.handle(command, context: context) }
    func write(_ write: DriverWrite) async throws { try await plugin.write(write, context: context) }
}

/// A mosquitto on a free 127.0.0.1 port, for the whole run.
struct Broker {
    let process: Process
    let port: Int
    let directory: URL

    static func start() throws -> Broker {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        close(fd)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-automation-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let conf = directory.appendingPathComponent("mosquitto.conf")
        try "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest none\nmax_queued_messages 0\nset_tcp_nodelay true\n"
            .write(to: conf, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-c", conf.path]
        try process.run()
        return Broker(process: process, port: port, directory: directory)
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }

    /// A client connected to this broker (retries until it listens; bounded by the caller's patience).
    func connect(_ id: String, onMessage: @escaping @Sendable (String, UnsafeRawBufferPointer) -> Void = { _, _ in }) async throws
        -> (MQTTConnection, AsyncStream<Int32>)
    {
        let (connected, up) = AsyncStream<Void>.makeStream()
        let (acks, ack) = AsyncStream<Int32>.makeStream()
        var handlers = MQTTConnection.Handlers()
        handlers.connected = { up.yield() }
        handlers.subscribed = { ack.yield($0) }
        handlers.message = { topic, payload, _ in onMessage(topic, payload) }
        var options = MQTTConnection.Options(host: "127.0.0.1", port: port, clientID: id)
        options.reconnectDelay = (1, 1)
        let c = try MQTTConnection(options: options, handlers: handlers)
        try c.start()
        for await _ in connected { break }
        return (c, acks)
    }
}

/// When something arrived, for a waiter that polls (a benchmark's receiver, not a test's).
final class Arrival: Sendable {
    let at = Atomic<UInt64>(0)
    let count = Atomic<Int>(0)
    func mark() {
        at.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing)
        count.add(1, ordering: .relaxed)
    }
    func reset() { at.store(0, ordering: .releasing) }
    /// The arrival time, or nil after `limit` (polls every ~50–100 µs without holding a thread).
    func wait(limit: Duration = .milliseconds(500)) async -> UInt64? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let t = at.load(ordering: .acquiring)
            if t != 0 { return t }
            try? await Task.sleep(for: .microseconds(50))
        }
        return nil
    }
}

struct EndToEndFigures {
    var edge: [Double] = []
    var mqtt: [Double] = []
    var lost = 0
}

let thermometers = 100

func discoveryConfigs(_ publisher: MQTTConnection) throws {
    for i in 0..<thermometers {
        _ = try publisher.publish(
            "homeassistant/sensor/bench/t\(i)/config",
            payload: #"{"name": "Thermometer \#(i)", "stat_t": "bench/t\#(i)", "val_tpl": "{{ value_json.t }}", "dev_cla": "temperature", "unit_of_meas": "°C", "uniq_id": "bench-t\#(i)"}"#,
            qos: 1, retain: true)
    }
    _ = try publisher.publish(
        "homeassistant/sensor/bench/trigger/config",
        payload: #"{"name": "Trigger", "stat_t": "bench/trigger", "val_tpl": "{{ value_json.t }}", "dev_cla": "temperature", "unit_of_meas": "°C", "uniq_id": "bench-trigger"}"#,
        qos: 1, retain: true)
    _ = try publisher.publish(
        "homeassistant/switch/bench/lamp/config",
        payload: #"{"name": "Bench lamp", "cmd_t": "bench/lamp/set", "stat_t": "bench/lamp/state", "uniq_id": "bench-lamp"}"#,
        qos: 1, retain: true)
}

/// One scenario: fresh core, plugins and engine; `others` automations; background load or not.
func endToEnd(broker: Broker, publisher: MQTTConnection, commands: Arrival, others: Int, background: Bool, samples: Int, tag: String)
    async throws -> EndToEndFigures
{
    var logger = Logger(label: "bench")
    logger.logLevel = .critical
    let core = HomeCore(logger: logger)

    let sim = GPIOSimulator()
    let gpio = GPIODriverPlugin(clock: ContinuousClock(), simulator: sim)
    let gpioConfig: Value = [
        "simulated": [["chip": "sim0", "lines": 8]],
        "lines": [
            ["id": "bell", "chip": "sim0", "line": 3, "role": "button", "debounce": "0", "chatter-guard": false, "multi-press-window": 0,
             "long-press": "1h", "name": "Bench Button", "room": "Hall"],
            ["id": "relay", "chip": "sim0", "line": 6, "role": "relay", "name": "Bench Relay", "room": "Hall"],
        ],
    ]
    let gpioContext = core.context(for: "gpio", configuration: PluginConfiguration(value: gpioConfig, keyPath: "plugins.gpio"))
    try gpio.validate(configuration: gpioContext.configuration)
    core.setCommandHandler(InProcess(gpio, gpioContext), for: "gpio")
    let gpioTask = Task { try await gpio.run(context: gpioContext) }

    let mqtt = MQTTPlugin()
    let mqttConfig: Value = ["broker": ["host": "127.0.0.1", "port": .int(Int64(broker.port)), "clientID": .string("bench-hearth-\(tag)")]]
    let mqttContext = core.context(for: "mqtt", configuration: PluginConfiguration(value: mqttConfig, keyPath: "plugins.mqtt"))
    core.setCommandHandler(InProcess(mqtt, mqttContext), for: "mqtt")
    let mqttTask = Task { try await mqtt.run(context: mqttContext) }
    defer {
        gpioTask.cancel()
        mqttTask.cancel()
    }

    // Every device known and the state topics subscribed (bounded: 30 s).
    let wanted = ["gpio:bell", "gpio:relay", "mqtt:bench-trigger", "mqtt:bench-lamp"] + (0..<thermometers).map { "mqtt:bench-t\($0)" }
    let ready = ContinuousClock.now + .seconds(30)
    let home = core.home(for: .system)
    while !(wanted.allSatisfy { (try? home.currentDevice(id: DeviceID(rawValue: $0))) != nil } && mqtt.acknowledgedSubscriptions.contains("bench/trigger")
        && sim.level(chip: "sim0", line: "6") != nil)
    {
        guard ContinuousClock.now < ready else { throw HomeError.internal("the devices did not appear within 30 s") }
        try await Task.sleep(for: .milliseconds(5))
    }

    // Commissioned, as an admin would (automations name devices in the home).
    let structure = StructureID(rawValue: "structure-bench")
    try home.edit([.createStructure(structure, name: "Bench")] + wanted.filter { $0.hasPrefix("mqtt:") }.map { id in
        .commission(DeviceID(rawValue: id), name: id == "mqtt:bench-lamp" ? "Bench lamp" : id == "mqtt:bench-trigger" ? "Trigger" : "Thermometer \(id.dropFirst(13))",
                    structure: structure, room: nil, primaryType: nil)
    })

    let engine = AutomationEngine(core: core, logger: logger, loopGuard: .init(starts: 10 * samples + 10, seconds: 10))
    let admin = Principal(id: "user:bench", role: .admin)
    for n in 0..<others {
        let json = """
            {"id": "a\(n)", "name": "Automation \(n)",
             "starters": [{"attribute": {"device": "mqtt:bench-t\(n % thermometers)", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue",
                                         "above": 32000, "hysteresis": 10}}],
             "actions": [{"log": "crossed"}]}
            """
        _ = try await engine.save(JSONDecoder().decode(Automation.self, from: Data(json.utf8)), as: admin)
    }
    let probes = [
        """
        {"id": "edge", "name": "Edge", "mode": "parallel",
         "starters": [{"event": {"device": "gpio:bell", "trait": "Switch", "event": "InitialPress"}}],
         "actions": [{"command": {"device": "gpio:relay", "trait": "OnOff", "command": "Toggle"}}]}
        """,
        """
        {"id": "hot", "name": "Hot", "mode": "parallel",
         "starters": [{"attribute": {"device": "mqtt:bench-trigger", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue", "above": 3000, "hysteresis": 100}}],
         "actions": [{"command": {"device": "mqtt:bench-lamp", "trait": "OnOff", "command": "On"}}]}
        """,
    ]
    for p in probes { _ = try await engine.save(JSONDecoder().decode(Automation.self, from: Data(p.utf8)), as: admin) }
    await engine.start()
    let service = Task { await engine.run() }
    defer { service.cancel() }

    // 1,000 reports/s to the thermometers, in bursts of 10 every 10 ms (values change, never cross).
    let load = Task {
        guard background else { return }
        var n = 0
        let start = ContinuousClock.now
        while !Task.isCancelled, n < 10_000_000 {
            for _ in 0..<10 {
                _ = try? publisher.publish("bench/t\(n % thermometers)", payload: #"{"t":\#(20 + (n / thermometers) % 2)}"#, qos: 0)
                n += 1
            }
            try? await Task.sleep(until: start + .milliseconds(n), clock: .continuous)
        }
    }
    defer { load.cancel() }
    try await Task.sleep(for: .milliseconds(200))

    var figures = EndToEndFigures()
    _ = try publisher.publish("bench/trigger", payload: #"{"t":20}"#, qos: 0)
    try await Task.sleep(for: .milliseconds(50))
    for i in 0..<samples {
        // Edge → relay.
        let before = sim.level(chip: "sim0", line: "6")
        let pressed = DispatchTime.now().uptimeNanoseconds
        try sim.setPull(chip: "sim0", line: "3", high: true)
        var flipped: UInt64?
        let deadline = pressed + 2_000_000_000
        while DispatchTime.now().uptimeNanoseconds < deadline {
            if sim.level(chip: "sim0", line: "6") != before {
                flipped = DispatchTime.now().uptimeNanoseconds
                break
            }
            try await Task.sleep(for: .microseconds(50))  // never holds a pool thread: the plugins need them
        }
        try sim.setPull(chip: "sim0", line: "3", high: false)
        // MQTT → MQTT: the trigger crosses 30 °C (the lamp's command is received), then falls back.
        commands.reset()
        let sent = DispatchTime.now().uptimeNanoseconds
        _ = try publisher.publish("bench/trigger", payload: #"{"t":35}"#, qos: 0)
        let commanded = await commands.wait()
        _ = try publisher.publish("bench/trigger", payload: #"{"t":20}"#, qos: 0)
        if i >= samples / 10 {  // the first 10 % warm up
            if let flipped { figures.edge.append(Double(flipped - pressed) / 1000) } else { figures.lost += 1 }
            if let commanded { figures.mqtt.append(Double(commanded - sent) / 1000) } else {
                figures.lost += 1
                if figures.lost < 3 {
                    let runs = (try? await engine.runs("hot", as: admin).prefix(3).map { "\($0.outcome) \($0.reason ?? "") \($0.cause.description) \($0.steps.map { "\($0.detail) \($0.result)" })" }) ?? []
                    let all = (try? await engine.runs("hot", as: admin).count) ?? 0
                    say("lost MQTT command \(i): \(all) runs of 'hot', \(commands.count.load(ordering: .relaxed)) commands received; newest: \(runs)")
                }
            }
        }
        try await Task.sleep(for: .milliseconds(15))
    }
    load.cancel()
    _ = await load.value
    service.cancel()
    _ = await service.value
    gpioTask.cancel()
    mqttTask.cancel()
    _ = await gpioTask.result
    _ = await mqttTask.result
    return figures
}

func runEndToEnd(samples: Int) async {
    let broker: Broker
    do { broker = try Broker.start() } catch {
        say("end to end: skipped, mosquitto cannot start (\(error))")
        return
    }
    defer { broker.stop() }
    do {
        let commands = Arrival()
        let (listener, acks) = try await broker.connect("bench-commands") { topic, _ in
            if topic == "bench/lamp/set" { commands.mark() }
        }
        _ = try listener.subscribe("bench/lamp/set", qos: 0)
        for await _ in acks { break }
        let (publisher, _) = try await broker.connect("bench-publisher")
        try discoveryConfigs(publisher)
        say()
        say("end to end, in-process with the real GPIO plugin (simulated chip) and MQTT plugin (mosquitto on 127.0.0.1:\(broker.port)), \(samples) samples each (first 10 % warm-up)")
        say("others  background  edge → relay p50 µs  p99 µs  max µs   MQTT → MQTT p50 µs  p99 µs  max µs  lost")
        for others in [0, 100, 1000] {
            for background in [false, true] {
                var f = try await endToEnd(
                    broker: broker, publisher: publisher, commands: commands, others: others, background: background, samples: samples,
                    tag: "\(others)-\(background)")
                f.edge.sort()
                f.mqtt.sort()
                func at(_ xs: [Double], _ q: Double) -> Double { xs.isEmpty ? .nan : xs[min(xs.count - 1, Int(Double(xs.count) * q))] }
                let label = String(repeating: " ", count: 4) + (background ? "1000/s" : "  none")
                say(
                    String(format: "%6d", others) + label
                        + String(
                            format: "  %19.0f  %6.0f  %6.0f   %18.0f  %6.0f  %6.0f  %4d", at(f.edge, 0.5), at(f.edge, 0.99), f.edge.last ?? .nan,
                            at(f.mqtt, 0.5), at(f.mqtt, 0.99), f.mqtt.last ?? .nan, f.lost))
            }
        }
        await listener.stop()
        await publisher.stop()
    } catch {
        say("end to end: failed: \(error)")
    }
}
