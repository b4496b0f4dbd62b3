// mqtt-benchmark e2e: MQTT → hearthd → WebSocket observer, side by side with a plain
// libmosquitto subscriber on the same broker and load generator (issue 22). The plain
// subscriber is the MQTT plugin's own `MQTTConnection` doing nothing but parse the number: the
// same read loop as hearthd's plugin, so the difference measured is what hearthd adds.
//
//   mqtt-benchmark e2e --hearthd NAME=PATH[@QUERY] [--hearthd …] [--devices 1000]
//                      [--messages 100000] [--rate 1000] [--seconds 10] [--rounds 1]
//                      [--publishers 1]
//
// PATH is a release `hearthd` with `libMQTTPlugin.so` (and `libPluginKit.so`) beside it; QUERY
// the observer's subscription (`deviceUpdates`, the default and what the web page used, or
// `deviceDeltas`). Every hearthd is started in turn (alternating over the rounds) on one
// mosquitto, with 1,000 Home Assistant–discovered temperature sensors commissioned, and one
// WebSocket observer. Prints figures; asserts nothing.
//
// The observer parses each message with the MQTT plugin's JSON parser (before session 14 of
// issue 22 with Foundation's JSONSerialization, a third of a core in a flood, taken from the
// same two cores as everything it measures); `core msg/s` is hearthd's ingest alone (its
// report counter polled during the flood), so the way out (event loop, socket, observer) shows
// as the difference to `hearth msg/s`.
//
// `--publishers N` floods from N connections on N threads (each device's messages from one of
// them, so each device's values stay in order): one publisher is usually what limits the flood
// (its thread runs at a full core), so more drive the broker, the plain subscriber and hearthd
// harder — the condition in which hearthd must keep up with a fast plain subscriber.
import Foundation
import HomeModel
import MQTTPlugin
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

enum EndToEnd {
    struct Target {
        let name: String
        let binary: String
        let query: String
    }

    struct Options {
        var targets: [Target] = []
        var devices = 1000
        var messages = 100_000
        var rate = 1000
        var seconds = 10
        var rounds = 1
        var publishers = 1
    }

    static func options(_ args: [String]) -> Options {
        var o = Options()
        var i = 0
        func next() -> String {
            i += 1
            guard i < args.count else { fail("\(args[i - 1]) needs a value") }
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--hearthd":
                let spec = next()
                guard let eq = spec.firstIndex(of: "=") else { fail("--hearthd NAME=PATH[@QUERY]") }
                var path = String(spec[spec.index(after: eq)...])
                var query = "deviceUpdates"
                if let at = path.lastIndex(of: "@") {
                    query = String(path[path.index(after: at)...])
                    path = String(path[..<at])
                }
                o.targets.append(Target(name: String(spec[..<eq]), binary: path, query: query))
            case "--devices": o.devices = Int(next()) ?? o.devices
            case "--messages": o.messages = Int(next()) ?? o.messages
            case "--rate": o.rate = Int(next()) ?? o.rate
            case "--seconds": o.seconds = Int(next()) ?? o.seconds
            case "--rounds": o.rounds = Int(next()) ?? o.rounds
            case "--publishers": o.publishers = max(1, min(8, Int(next()) ?? o.publishers))
            default: fail("unknown argument \(args[i])")
            }
            i += 1
        }
        if o.targets.isEmpty { fail("give at least one --hearthd NAME=PATH") }
        return o
    }

    // MARK: Clocks and CPU

    static func monotonic() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// user + system CPU seconds of a process (`/proc/PID/stat`) or a thread (`/proc/self/task/TID/stat`).
    static func cpuSeconds(statFile: String) -> Double {
        guard let text = try? String(contentsOfFile: statFile, encoding: .utf8), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(close, offsetBy: 2)...].split(separator: " ")
        // After the command: state is field 3; utime 14, stime 15 (1-based in proc(5)).
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    // MARK: Value scheme

    /// The value (0.01 °C) message `k` of a device carries: distinct for every k below 30,000.
    static func centi(_ k: Int) -> Int { k % 30_000 - 5_000 }
    static func payload(_ centi: Int) -> String { #"{"t":\#(Double(centi) / 100)}"# }

    /// Arrivals keyed by (device index, value): first arrival time.
    final class Seen: Sendable {
        struct State {
            var times: [Int64: UInt64] = [:]
            var count = 0
            var last: UInt64 = 0
            var latest: [Int: Int] = [:]  // device → newest value seen
        }
        let state = Mutex(State())
        static func key(_ device: Int, _ value: Int) -> Int64 { Int64(device) << 32 | Int64(UInt32(bitPattern: Int32(value))) }
        func record(_ device: Int, _ value: Int, at t: UInt64, keepTimes: Bool) {
            state.withLock { s in
                s.count += 1
                s.last = t
                s.latest[device] = value
                if keepTimes {
                    let k = Self.key(device, value)
                    if s.times[k] == nil { s.times[k] = t }
                }
            }
        }
        func reset() { state.withLock { $0 = State() } }
    }

    // MARK: HTTP (URLSession, loopback only)

    static func request(_ method: String, _ url: String, token: String? = nil, body: String? = nil) async throws -> (Int, Data) {
        var r = URLRequest(url: URL(string: url)!)
        r.httpMethod = method
        if let token { r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            r.httpBody = Data(body.utf8)
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: r)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    static func json(_ data: Data) -> Any? { try? JSONSerialization.jsonObject(with: data) }

    // MARK: The WebSocket observer: a plain RFC 6455 client on a thread of its own

    final class Observer: @unchecked Sendable {  // the socket is used by its own thread only (and closed by stop())
        let fd: Int32
        let seen: Seen
        let deviceIndex: @Sendable (String) -> Int?
        let keepTimes = Mutex(false)
        let messages = Mutex(0)
        let bytes = Mutex(0)
        let firstMessage = Mutex(false)

        init(port: Int, token: String, query: String, seen: Seen, deviceIndex: @escaping @Sendable (String) -> Int?) throws {
            self.seen = seen
            self.deviceIndex = deviceIndex
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard rc == 0 else { fail("observer: cannot connect") }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let hello =
                "GET /api/v1/ws?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: aGVhcnRoLWJlbmNoLWtleQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            writeAll(Array(hello.utf8))
            // The answer's head, byte by byte (it is short): up to the blank line.
            var head: [UInt8] = []
            while !(head.count >= 4 && head.suffix(4) == [13, 10, 13, 10]) {
                var b: UInt8 = 0
                guard read(fd, &b, 1) == 1 else { fail("observer: the upgrade failed") }
                head.append(b)
            }
            guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
                fail("observer: upgrade refused: \(String(decoding: head, as: UTF8.self))")
            }
            sendText(#"{"type":"subscribe","id":"tiles","query":"\#(query)"}"#)
        }

        func writeAll(_ bytes: [UInt8]) {
            var off = 0
            while off < bytes.count {
                let n = bytes[off...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { return }
                off += n
            }
        }

        /// A masked client frame (`opcode` 1: text, 10: pong).
        func sendText(_ text: String, opcode: UInt8 = 1) {
            let payload = Array(text.utf8)
            var frame: [UInt8] = [0x80 | opcode]
            if payload.count < 126 {
                frame.append(0x80 | UInt8(payload.count))
            } else {
                frame.append(0x80 | 126)
                frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            }
            let mask: [UInt8] = [1, 2, 3, 4]
            frame += mask
            for (i, b) in payload.enumerated() { frame.append(b ^ mask[i % 4]) }
            writeAll(frame)
        }

        var buffer: [UInt8] = []
        var start = 0

        func need(_ n: Int) -> Bool {
            while buffer.count - start < n {
                if start > 0 {
                    buffer.removeFirst(start)
                    start = 0
                }
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard got > 0 else { return false }
                buffer += chunk[0..<got]
            }
            return true
        }

        /// Reads frames until the socket closes; each text message is parsed and recorded.
        func run() {
            var message: [UInt8] = []
            while need(2) {
                let b0 = buffer[start]
                let b1 = buffer[start + 1]
                var length = Int(b1 & 0x7F)
                var headerLength = 2
                if length == 126 {
                    guard need(4) else { return }
                    length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
                    headerLength = 4
                } else if length == 127 {
                    guard need(10) else { return }
                    length = (0..<8).reduce(0) { $0 << 8 | Int(buffer[start + 2 + $1]) }
                    headerLength = 10
                }
                guard need(headerLength + length) else { return }
                let body = buffer[(start + headerLength)..<(start + headerLength + length)]
                start += headerLength + length
                let opcode = b0 & 0x0F
                switch opcode {
                case 0x8: return
                case 0x9: sendText(String(decoding: body, as: UTF8.self), opcode: 0xA)
                case 0x1, 0x0:
                    message += body
                    if b0 & 0x80 != 0 {
                        handle(message)
                        message.removeAll(keepingCapacity: true)
                    }
                default: break
                }
            }
        }

        /// Parses a text message with the MQTT plugin's JSON parser (strict, and as lean as
        /// the plain subscriber's parse: Foundation's JSONSerialization, used before, cost this
        /// thread a third of a core in a flood, competing with everything it measures) and
        /// records the temperatures it carries.
        func handle(_ text: [UInt8]) {
            let t = monotonic()
            messages.withLock { $0 += 1 }
            bytes.withLock { $0 += text.count }
            guard case .object(let object)? = try? text.withUnsafeBytes({ (b) throws(JSONParser.Failure) in try JSONParser.parse(b) }) else { return }
            let keep = keepTimes.withLock { $0 }
            var any = false
            let type = object["type"]?.stringValue
            switch type {
            case "changed":
                for case .object(let device) in object["devices"]?.listValue ?? [] {
                    if let id = device["id"]?.stringValue, let d = deviceIndex(id), let v = Self.measured(device) {
                        seen.record(d, v, at: t, keepTimes: keep)
                        any = true
                    }
                }
            case "delta":
                for case .object(let change) in object["changes"]?.listValue ?? [] {
                    guard let id = change["device"]?.stringValue, let d = deviceIndex(id) else { continue }
                    if case .object(let full)? = change["full"] {
                        if let v = Self.measured(full) { seen.record(d, v, at: t, keepTimes: keep) }
                        any = true
                    }
                    for case .object(let a) in change["attributes"]?.listValue ?? [] where a["trait"]?.intValue == 0x0402 && a["attribute"]?.intValue == 0 {
                        if let v = a["value"]?.intValue { seen.record(d, Int(v), at: t, keepTimes: keep) }
                        any = true
                    }
                }
            default: break
            }
            // The first message (every device, values maybe not reported yet) marks the feed live.
            if any || type == "changed" || type == "delta" { firstMessage.withLock { $0 = true } }
        }

        /// Temperature Measurement (0x0402) MeasuredValue (0) of a whole device.
        static func measured(_ device: [String: Value]) -> Int? {
            for case .object(let type) in device["types"]?.listValue ?? [] {
                for case .object(let trait) in type["traits"]?.listValue ?? [] where trait["id"]?.intValue == 0x0402 {
                    for case .object(let a) in trait["attributes"]?.listValue ?? [] where a["id"]?.intValue == 0 {
                        return a["value"]?.intValue.map { Int($0) }
                    }
                }
            }
            return nil
        }

        func stop() { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    // MARK: One hearthd

    struct Figures {
        var plainRate = 0.0
        var hearthRate = 0.0
        /// Messages ÷ (first publish → hearthd's core counted every report): its ingest, before the observer.
        var coreRate = 0.0
        var reportsCounted = 0.0
        var sent = 0
        var observerMessages = 0
        var observerBytes = 0
        var observerFinal = 0
        var plainP50 = 0.0, plainP99 = 0.0, hearthP50 = 0.0, hearthP99 = 0.0
        var pacedSeen = 0, pacedSent = 0, plainSeenPaced = 0
        var hearthCPUPer10k = 0.0, plainCPUPer10k = 0.0, hearthFloodCPUPer10k = 0.0
    }

    static func percentile(_ xs: [Double], _ p: Double) -> Double {
        guard !xs.isEmpty else { return .nan }
        let sorted = xs.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    static func run(arguments: [String]) async throws {
        let o = options(arguments)
        let port = freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-e2e-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configFile = directory.appendingPathComponent("mosquitto.conf")
        try "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest none\nmax_queued_messages 0\n"
            .write(to: configFile, atomically: true, encoding: .utf8)
        let broker = Process()
        broker.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        broker.arguments = ["-c", configFile.path]
        try broker.run()
        defer { kill(broker.processIdentifier, SIGKILL) }

        let devices = o.devices
        // Plain subscriber: bench/t/N → device N, the number between ':' and '}'.
        let plainSeen = Seen()
        let flags = PlainFlags()
        let plain = try await connectClient(port: port, id: "bench-plain") { topic, payload in
            let t = monotonic()
            if flags.statFile.withLock({ $0 }) == nil { flags.statFile.withLock { $0 = threadStatFile() } }
            guard let slash = topic.lastIndex(of: "/"), let d = Int(topic[topic.index(after: slash)...]) else { return }
            guard let colon = payload.firstIndex(of: UInt8(ascii: ":")) else { return }
            let number = String(decoding: payload[(colon + 1)..<(payload.count - 1)], as: UTF8.self)
            guard let v = Double(number) else { return }
            plainSeen.record(d, Int((v * 100).rounded()), at: t, keepTimes: flags.keep.withLock { $0 })
        }
        _ = try plain.connection.subscribe("bench/t/#", qos: 0)
        try await Task.sleep(for: .milliseconds(300))
        let publisher = try await connectClient(port: port, id: "bench-load")
        var floodPublishers = [publisher.connection]
        for n in 1..<o.publishers { floodPublishers.append(try await connectClient(port: port, id: "bench-load-\(n + 1)").connection) }
        for d in 0..<devices {
            let config =
                #"{"name": "Bench \#(d)", "stat_t": "bench/t/\#(d)", "val_tpl": "{{ value_json.t }}", "dev_cla": "temperature", "unit_of_meas": "°C", "uniq_id": "bench-t\#(d)"}"#
            _ = try publisher.connection.publish("homeassistant/sensor/bench/t\(d)/config", payload: config, qos: 1, retain: true)
        }
        progress("e2e: mosquitto on 127.0.0.1:\(port), \(devices) discovery configs published (retained)")

        var results: [(String, Figures)] = []
        var round = 0
        // Each round of values starts past the previous ones (values are distinct per device).
        var nextK = 0
        for r in 0..<o.rounds {
            for target in (r % 2 == 0 ? o.targets : o.targets.reversed()) {
                round += 1
                let f = try await measure(
                    target, broker: port, directory: directory.appendingPathComponent("run\(round)"), options: o, publisher: publisher.connection,
                    floodPublishers: floodPublishers,
                    plainSeen: plainSeen, flags: flags, k: &nextK)
                results.append((target.name, f))
            }
        }
        for c in floodPublishers { await c.stop() }
        await plain.connection.stop()

        func f(_ x: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", x) }
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
        print(
            """
            MQTT → hearthd → WebSocket observer, mosquitto on 127.0.0.1:\(port), \(devices) HA-discovered temperature sensors, one load generator
            flood: \(o.messages) messages (QoS 0) round-robin over the devices from \(o.publishers) publisher(s); paced: \(o.rate) msg/s for \(o.seconds) s; load average now \(load)

            """)
        let header = [
            pad("run", 22), pad("plain msg/s", 13), pad("hearth msg/s", 14), pad("hearth/plain", 14), pad("core msg/s", 12), pad("reports/sent", 18),
            pad("observer msgs (KiB)", 22), pad("plain p50/p99 µs", 19), pad("hearth p50/p99 µs", 20), pad("p99 Δ µs", 10),
            pad("seen paced", 14), pad("CPU s/10k plain", 17), pad("hearth paced", 14), "hearth flood",
        ]
        print(header.joined())
        for (name, x) in results {
            let row: [String] = [
                pad(name, 22), pad(f(x.plainRate), 13), pad(f(x.hearthRate), 14), pad(f(x.hearthRate / x.plainRate * 100, 1) + " %", 14),
                pad(f(x.coreRate), 12),
                pad("\(Int(x.reportsCounted))/\(x.sent)", 18), pad("\(x.observerMessages) (\(x.observerBytes / 1024))", 22),
                pad("\(f(x.plainP50))/\(f(x.plainP99))", 19), pad("\(f(x.hearthP50))/\(f(x.hearthP99))", 20),
                pad(String(format: "%+.0f", x.hearthP99 - x.plainP99), 10), pad("\(x.pacedSeen)/\(x.pacedSent)", 14),
                pad(f(x.plainCPUPer10k, 3), 17), pad(f(x.hearthCPUPer10k, 3), 14), f(x.hearthFloodCPUPer10k, 3),
            ]
            print(row.joined())
        }
        print(
            """

            hearth msg/s: messages ÷ (first publish → the observer has every device's final value); core msg/s: messages ÷ (first publish → hearth_reports_total counts them all, polled every 10 ms: hearthd's ingest without its way out); reports/sent: hearth_reports_total{plugin="mqtt"} counted during the flood vs messages sent.
            observer msgs: WebSocket messages the observer read during the flood (it may coalesce: a message can carry many devices).
            latency: publish → plain subscriber / → WebSocket observer parsed the value, paced messages only; seen paced: values the observer saw of those sent.
            CPU s/10k: user+system seconds per 10,000 messages — plain: the subscriber's network thread; hearth: the hearthd process (paced and flood).
            """)
    }

    struct Client: Sendable { let connection: MQTTConnection }

    /// The plain subscriber's switches, shared with its network thread.
    final class PlainFlags: Sendable {
        /// Whether arrival times are kept (paced phase).
        let keep = Mutex(false)
        /// `/proc/PID/task/TID/stat` of its network thread (its CPU time).
        let statFile = Mutex<String?>(nil)
    }

    /// The calling thread's `stat` file (`/proc/thread-self` names it).
    static func threadStatFile() -> String? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self") else { return nil }
        return "/proc/\(target)/stat"
    }

    static func connectClient(port: Int, id: String, onMessage: @escaping @Sendable (String, [UInt8]) -> Void = { _, _ in }) async throws -> Client {
        let (connected, continuation) = AsyncStream<Void>.makeStream()
        var handlers = MQTTConnection.Handlers()
        handlers.connected = { continuation.yield() }
        handlers.message = { topic, payload, _ in onMessage(topic, Array(payload)) }
        var options = MQTTConnection.Options(host: "127.0.0.1", port: port, clientID: id)
        options.reconnectDelay = (1, 1)
        let c = try MQTTConnection(options: options, handlers: handlers)
        try c.start()
        for await _ in connected { break }
        return Client(connection: c)
    }

    static func publish(_ c: MQTTConnection, _ device: Int, _ centi: Int) {
        let p = payload(centi)
        for _ in 0..<100_000 {
            do {
                _ = try c.publish("bench/t/\(device)", payload: p, qos: 0)
                return
            } catch {
                usleep(50)  // libmosquitto's outgoing queue is full: let it drain
            }
        }
        fail("cannot publish")
    }

    static func waitUntil(_ what: String, seconds: Double = 120, _ condition: () async -> Bool) async {
        let deadline = monotonic() + UInt64(seconds * 1e9)
        while monotonic() < deadline {
            if await condition() { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
        fail("e2e: timed out waiting for \(what)")
    }

    static func reportsTotal(_ metricsPort: Int) async -> Double {
        guard let (_, data) = try? await request("GET", "http://127.0.0.1:\(metricsPort)/metrics") else { return -1 }
        let text = String(decoding: data, as: UTF8.self)
        var total = 0.0
        for line in text.split(separator: "\n") where line.hasPrefix("hearth_reports_total") && line.contains("mqtt") {
            total += Double(line.split(separator: " ").last ?? "") ?? 0
        }
        return total
    }

    static func measure(
        _ target: Target, broker: Int, directory: URL, options o: Options, publisher: MQTTConnection, floodPublishers: [MQTTConnection], plainSeen: Seen,
        flags: PlainFlags, k: inout Int
    ) async throws -> Figures {
        let fm = FileManager.default
        let plugins = directory.appendingPathComponent("plugins")
        try fm.createDirectory(at: plugins, withIntermediateDirectories: true)
        let binDir = URL(fileURLWithPath: target.binary).deletingLastPathComponent()
        try fm.copyItem(at: binDir.appendingPathComponent("libMQTTPlugin.so"), to: plugins.appendingPathComponent("libMQTTPlugin.so"))
        let apiPort = freePort()
        let metricsPort = freePort()
        try """
            log: {level: warning}
            storage: {database: \(directory.path)/hearth.sqlite}
            server: {listen: "127.0.0.1:\(apiPort)", stateDirectory: \(directory.path)/state}
            metrics: {listen: "127.0.0.1:\(metricsPort)"}
            plugins:
              mqtt:
                broker: {host: 127.0.0.1, port: \(broker), clientID: bench-hearthd}
            """.write(to: directory.appendingPathComponent("hearth.yaml"), atomically: true, encoding: .utf8)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: target.binary)
        daemon.arguments = ["--config", directory.appendingPathComponent("hearth.yaml").path, "--plugins", plugins.path]
        daemon.currentDirectoryURL = directory
        daemon.standardOutput = FileHandle.nullDevice
        _ = fm.createFile(atPath: directory.path + "/hearthd.log", contents: nil)
        daemon.standardError = FileHandle(forWritingAtPath: directory.path + "/hearthd.log")
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        let api = "http://127.0.0.1:\(apiPort)/api/v1"
        let codeFile = directory.path + "/state/setup-code"
        await waitUntil("hearthd's setup code") { fm.fileExists(atPath: codeFile) && ((try? String(contentsOfFile: codeFile, encoding: .utf8)) ?? "").count >= 4 }
        let code = try String(contentsOfFile: codeFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        var token = ""
        await waitUntil("setup") {
            guard let (status, data) = try? await request("POST", api + "/auth/setup", body: #"{"code":"\#(code)","password":"bench-password-22"}"#),
                status == 200, let t = (json(data) as? [String: Any])?["token"] as? String
            else { return false }
            token = t
            return true
        }
        let (_, structureData) = try await request("POST", api + "/structures", token: token, body: #"{"name":"Bench"}"#)
        guard let structure = (json(structureData) as? [String: Any])?["id"] as? String else { fail("e2e: no structure: \(String(decoding: structureData, as: UTF8.self))") }
        var discovered: [String] = []
        await waitUntil("\(o.devices) discovered devices") {
            guard let (_, data) = try? await request("GET", api + "/discovered", token: token), let list = json(data) as? [[String: Any]] else { return false }
            discovered = list.compactMap { $0["id"] as? String }.filter { $0.hasPrefix("mqtt:bench-t") }
            return discovered.count == o.devices
        }
        let t0 = monotonic()
        for id in discovered {
            let n = id.dropFirst("mqtt:bench-t".count)
            let (status, data) = try await request("POST", api + "/devices/\(id)/commission", token: token, body: #"{"name":"Bench \#(n)","structure":"\#(structure)"}"#)
            guard status == 200 else { fail("e2e: commissioning \(id): \(status) \(String(decoding: data, as: UTF8.self))") }
        }
        progress("e2e[\(target.name)]: \(o.devices) devices commissioned in \(String(format: "%.1f", Double(monotonic() - t0) / 1e9)) s")

        let seen = Seen()
        let observer = try Observer(port: apiPort, token: token, query: target.query, seen: seen) { id in
            id.hasPrefix("mqtt:bench-t") ? Int(id.dropFirst("mqtt:bench-t".count)) : nil
        }
        let thread = Thread { observer.run() }
        thread.name = "e2e-observer"
        thread.start()
        defer { observer.stop() }
        await waitUntil("the observer's first message") { observer.firstMessage.withLock { $0 } }

        // Warm-up: one value per device, until both receivers have every device's value (all
        // subscriptions acknowledged, the observer live).
        let warm = k
        k += 1
        for d in 0..<o.devices { publish(publisher, d, centi(warm)) }
        await waitUntil("warm-up values at the observer", seconds: 60) {
            seen.state.withLock { s in (0..<o.devices).allSatisfy { s.latest[$0] == centi(warm) } }
        }
        await waitUntil("warm-up values at the plain subscriber", seconds: 60) {
            plainSeen.state.withLock { s in (0..<o.devices).allSatisfy { s.latest[$0] == centi(warm) } }
        }

        var figures = Figures()
        let pid = daemon.processIdentifier

        // Paced: o.rate msg/s, round-robin, each message a new value; latency per message.
        seen.reset()
        plainSeen.reset()
        observer.keepTimes.withLock { $0 = true }
        flags.keep.withLock { $0 = true }
        let pacedCount = o.rate * o.seconds
        let base = k
        k += pacedCount / o.devices + 1
        var sentAt: [(Int, Int, UInt64)] = []
        sentAt.reserveCapacity(pacedCount)
        let plainThreadStat = flags.statFile.withLock { $0 } ?? "/proc/self/stat"
        let hearthCPU0 = cpuSeconds(statFile: "/proc/\(pid)/stat")
        let plainCPU0 = cpuSeconds(statFile: plainThreadStat)
        let interval = 1_000_000_000 / UInt64(o.rate)
        let pacedStart = monotonic()
        for i in 0..<pacedCount {
            let due = pacedStart + UInt64(i) * interval
            while true {
                let now = monotonic()
                if now >= due { break }
                let wait = due - now
                var ts = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
                nanosleep(&ts, nil)
            }
            let d = i % o.devices
            let v = centi(base + i / o.devices)
            let t = monotonic()
            publish(publisher, d, v)
            sentAt.append((d, v, t))
        }
        let lastPaced = sentAt.last!
        await waitUntil("the last paced value", seconds: 30) {
            seen.state.withLock { $0.latest[lastPaced.0] == lastPaced.1 } && plainSeen.state.withLock { $0.latest[lastPaced.0] == lastPaced.1 }
        }
        try await Task.sleep(for: .milliseconds(200))
        figures.hearthCPUPer10k = (cpuSeconds(statFile: "/proc/\(pid)/stat") - hearthCPU0) / Double(pacedCount) * 10_000
        figures.plainCPUPer10k = (cpuSeconds(statFile: plainThreadStat) - plainCPU0) / Double(pacedCount) * 10_000
        observer.keepTimes.withLock { $0 = false }
        flags.keep.withLock { $0 = false }
        var hearthLatencies: [Double] = []
        var plainLatencies: [Double] = []
        let (hTimes, pTimes) = (seen.state.withLock { $0.times }, plainSeen.state.withLock { $0.times })
        for (d, v, t) in sentAt.dropFirst(sentAt.count / 20) {  // the first 5 %: warm-up
            let key = Seen.key(d, v)
            if let a = hTimes[key] { hearthLatencies.append(Double(a &- t) / 1000) }
            if let a = pTimes[key] { plainLatencies.append(Double(a &- t) / 1000) }
        }
        figures.pacedSent = sentAt.count - sentAt.count / 20
        figures.pacedSeen = hearthLatencies.count
        figures.plainSeenPaced = plainLatencies.count
        (figures.hearthP50, figures.hearthP99) = (percentile(hearthLatencies, 0.5), percentile(hearthLatencies, 0.99))
        (figures.plainP50, figures.plainP99) = (percentile(plainLatencies, 0.5), percentile(plainLatencies, 0.99))

        // Flood: as fast as one publisher can, round-robin; the final value of each device marks the end.
        seen.reset()
        plainSeen.reset()
        let messagesBefore = observer.messages.withLock { $0 }
        let bytesBefore = observer.bytes.withLock { $0 }
        let reports0 = await reportsTotal(metricsPort)
        let floodCPU0 = cpuSeconds(statFile: "/proc/\(pid)/stat")
        let floodBase = k
        k += o.messages / o.devices + 1
        let finalValue = { (d: Int) in centi(floodBase + (o.messages - 1 - ((o.messages - 1 - d) % o.devices)) / o.devices) }
        let floodStart = monotonic()
        // When hearthd's core has counted every report (polled every 10 ms, 120 s at most; it
        // reads late by up to a poll and a request).
        let messages = Double(o.messages)
        let coreCounted = Task { () -> UInt64? in
            for _ in 0..<12_000 {
                if await reportsTotal(metricsPort) - reports0 >= messages { return monotonic() }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return nil
        }
        if floodPublishers.count == 1 {
            for i in 0..<o.messages { publish(publisher, i % o.devices, centi(floodBase + i / o.devices)) }
        } else {
            // Publisher n sends the devices d with d % count == n, in the same round-robin order.
            let count = floodPublishers.count
            DispatchQueue.concurrentPerform(iterations: count) { n in
                for i in 0..<o.messages where (i % o.devices) % count == n {
                    publish(floodPublishers[n], i % o.devices, centi(floodBase + i / o.devices))
                }
            }
        }
        let lastDevice = min(o.devices, o.messages)
        await waitUntil("the flood at the plain subscriber", seconds: 120) { plainSeen.state.withLock { $0.count } >= o.messages }
        let plainDone = plainSeen.state.withLock { $0.last }
        await waitUntil("every device's final value at the observer", seconds: 120) {
            seen.state.withLock { s in (0..<lastDevice).allSatisfy { s.latest[$0] == finalValue($0) } }
        }
        let hearthDone = seen.state.withLock { $0.last }
        figures.hearthFloodCPUPer10k = (cpuSeconds(statFile: "/proc/\(pid)/stat") - floodCPU0) / Double(o.messages) * 10_000
        figures.plainRate = Double(o.messages) / (Double(plainDone - floodStart) / 1e9)
        figures.hearthRate = Double(o.messages) / (Double(hearthDone - floodStart) / 1e9)
        if let coreDone = await coreCounted.value { figures.coreRate = Double(o.messages) / (Double(coreDone - floodStart) / 1e9) }
        figures.sent = o.messages
        // The counter is read once the observer has everything: all reports are in by then.
        figures.reportsCounted = await reportsTotal(metricsPort) - reports0
        figures.observerMessages = observer.messages.withLock { $0 } - messagesBefore
        figures.observerBytes = observer.bytes.withLock { $0 } - bytesBefore
        progress("e2e[\(target.name)]: done (plain \(Int(figures.plainRate)) msg/s, hearth \(Int(figures.hearthRate)) msg/s)")
        return figures
    }
}
