import Foundation
import HomeModel
import MQTTPlugin
import PluginHost

/// A bounded, seeded random-input run over everything the MQTT side of hearthd parses from
/// the network (#14): Home Assistant discovery configs (vendors' real configs, mutated), the
/// templates inside them, JSON state payloads, and the isolated-plugin wire protocol (frames of
/// JSON decoded into protocol messages).
///
/// Nothing may crash or hang: a crash ends the process (the caller runs this in a child, or
/// as `mqtt-fuzz`), and a watchdog aborts with the offending input when one input takes longer
/// than ``Options/hangSeconds``.
public struct MQTTFuzzer {
    public struct Options: Sendable {
        public var count: Int
        public var seed: UInt64
        /// A single input taking longer than this is a hang: the run prints it and aborts.
        public var hangSeconds: Double = 10
        /// Vendor discovery configs to mutate (the test fixtures); built-in seeds are always used.
        public var corpus: [String] = []

        public init(count: Int, seed: UInt64 = 0x4845_4152_5448) {
            self.count = count
            self.seed = seed
        }
    }

    /// What a run did.
    public struct Report: Sendable, CustomStringConvertible {
        public var inputs = 0
        public var byKind: [String: Int] = [:]
        public var refused = 0
        public var accepted = 0
        public var slowestSeconds = 0.0
        public var slowestKind = ""
        public var seconds = 0.0

        public var description: String {
            let kinds = byKind.keys.sorted().map { "\($0) \(byKind[$0]!)" }.joined(separator: ", ")
            return "\(inputs) inputs (\(kinds)) in \(String(format: "%.1f", seconds)) s: \(accepted) accepted, \(refused) refused; "
                + "slowest input \(String(format: "%.1f", slowestSeconds * 1000)) ms (\(slowestKind))"
        }
    }

    /// Built-in discovery seeds (every component the plugin maps), used with the corpus.
    public static let seeds: [(topic: String, config: String)] = [
        ("homeassistant/switch/s1/config", #"{"cmd_t":"s1/set","stat_t":"s1/state","qos":1,"dev":{"ids":["d1"],"name":"Plug"},"avty_t":"s1/avail"}"#),
        ("homeassistant/light/l1/config", #"{"cmd_t":"l1/set","stat_t":"l1/state","bri_cmd_t":"l1/b","bri_stat_t":"l1/bs","bri_scl":100,"clr_temp_cmd_t":"l1/ct","clr_temp_stat_t":"l1/cts","min_mirs":153,"max_mirs":500,"dev":{"ids":"d2"}}"#),
        ("homeassistant/light/l2/config", #"{"schema":"json","cmd_t":"l2/set","stat_t":"l2/state","brightness":true,"supported_color_modes":["color_temp","xy"],"bri_scl":255,"dev":{"ids":"d3"}}"#),
        ("homeassistant/cover/c1/config", #"{"cmd_t":"c1/set","stat_t":"c1/state","pos_t":"c1/pos","set_pos_t":"c1/setpos","pos_open":100,"pos_clsd":0,"set_pos_tpl":"{{ position }}","dev":{"ids":"d4"}}"#),
        ("homeassistant/fan/f1/config", #"{"cmd_t":"f1/set","stat_t":"f1/state","pct_cmd_t":"f1/p","pct_stat_t":"f1/ps","spd_rng_min":1,"spd_rng_max":6,"dev":{"ids":"d5"}}"#),
        ("homeassistant/lock/k1/config", #"{"cmd_t":"k1/set","stat_t":"k1/state","dev":{"ids":"d6"}}"#),
        ("homeassistant/climate/t1/config", #"{"temp_cmd_t":"t1/t","temp_stat_t":"t1/ts","curr_temp_t":"t1/cur","mode_cmd_t":"t1/m","mode_stat_t":"t1/ms","modes":["off","heat"],"min_temp":7,"max_temp":30,"dev":{"ids":"d7"}}"#),
        ("homeassistant/sensor/n1/config", #"{"stat_t":"n1/state","dev_cla":"temperature","unit_of_meas":"°F","val_tpl":"{{ value_json.temperature | float(0) | round(1) }}","json_attr_t":"n1/attr","dev":{"ids":"d8"}}"#),
        ("homeassistant/binary_sensor/b1/config", #"{"stat_t":"b1/state","dev_cla":"door","val_tpl":"{% if value_json.contact %}OFF{% else %}ON{% endif %}","avty":[{"t":"b1/avail","val_tpl":"{{ value_json.state }}"}],"dev":{"ids":"d9"}}"#),
        ("homeassistant/sensor/e1/config", #"{"stat_t":"e1/state","dev_cla":"energy","unit_of_meas":"kWh","val_tpl":"{{ (value|float/60/1000)|round(2) }}","json_attr_t":"e1/attr","dev":{"ids":"d11"}}"#),
        ("homeassistant/sensor/e2/config", #"{"stat_t":"e1/state","dev_cla":"power","unit_of_meas":"W","val_tpl":"{{ value_json.power }}","dev":{"ids":"d11"}}"#),
        ("homeassistant/sensor/q1/config", #"{"stat_t":"q1/state","dev_cla":"pm25","unit_of_meas":"µg/m³","val_tpl":"{{ value_json.pm25 }}","json_attr_t":"q1/state","dev":{"ids":"d12"}}"#),
        ("homeassistant/device_automation/a1/action_single/config", #"{"atype":"trigger","t":"a1/action","type":"action","stype":"button_1","pl":"single","dev":{"ids":"d10"}}"#),
    ]

    /// Template pieces the generator combines (HA's and Jinja's syntax, valid and not).
    static let templateAtoms = [
        "value", "value_json", "value_json.temperature", "value_json['a'][0]", "1", "-1", "2.5", "9223372036854775807",
        "'s'", "\"x\"", "none", "true", "[1, 2]", "[]", "position", "value_json.x.y.z",
    ]
    static let templateOperators = ["+", "-", "*", "/", "//", "%", "**", "~", "==", "!=", "<", ">=", "and", "or", "in", "not in", "is defined", "is not none"]
    static let templateFilters = [
        "float", "float(0)", "int", "int(0)", "round(1)", "round(2, 'floor')", "abs", "lower", "upper", "string", "default(0)",
        "d('x', true)", "bool", "trim", "replace('a', 'bb')", "length", "is_defined", "from_json", "to_json", "unknown_filter",
        "count", "tojson", "is_number", "iif('a', 'b')", "title",
    ]

    /// Values that have broken parsers before: non-finite, huge, negative, wrong types, bad topics.
    static let hostileValues: [Value] = [
        .string("nan"), .string("NaN"), .string("inf"), .string("-inf"), .string("1e400"), .double(1e300), .double(-1e300),
        .double(1e-300), .int(Int64.max), .int(Int64.min), .int(-1), .int(0), .int(7), .int(65536), .double(0.5),
        .string(""), .string("\u{0}"), .string("\u{0}abc"), .string("a/#/b"), .string("#"), .string("+"), .string("a/+"),
        .string("$SYS/#"), .string(String(repeating: "x", count: 70_000)), .string("\u{1F}"), .string("\u{FFFF}"),
        .bool(true), .bool(false), .null, .list([]), .list([.string("x")]), .object([:]), .object(["t": .string("")]),
        .string("{{ " + String(repeating: "(", count: 5000) + " }}"), .string("{% if %}"), .string("{{ value_json"),
    ]

    static let fields = [
        "qos", "bri_scl", "min_mirs", "max_mirs", "min_kelvin", "max_kelvin", "pos_open", "pos_clsd", "spd_rng_min",
        "spd_rng_max", "min_temp", "max_temp", "stat_t", "cmd_t", "avty_t", "avty", "dev", "json_attr_t", "set_pos_t",
        "pos_t", "val_tpl", "bri_val_tpl", "set_pos_tpl", "schema", "supported_color_modes", "modes", "opt", "avty_mode",
        "clr_temp_k", "temp_unit", "unit_of_meas", "dev_cla", "pl_on", "pl_off", "t", "stype", "~", "name",
    ]

    public let options: Options
    var rng: SplitMix64
    var corpus: [(topic: String, config: Value)] = []

    public init(options: Options) {
        self.options = options
        rng = SplitMix64(seed: options.seed)
        for seed in Self.seeds {
            if let v = try? JSONParser.parse(seed.config) { corpus.append((seed.topic, v)) }
        }
        for text in options.corpus {
            guard let fixture = try? JSONParser.parse(text), case .list(let items)? = fixture["discovery"] else { continue }
            for item in items {
                guard let topic = item["topic"]?.stringValue, let payload = item["payload"] else { continue }
                let config = payload.stringValue.flatMap { try? JSONParser.parse($0) } ?? payload
                if case .object = config { corpus.append((topic, config)) }
            }
        }
    }

    /// The vendor fixtures next to the MQTT plugin's tests, as text (for ``Options/corpus``).
    public static func fixtureCorpus(sourceFile: String = #filePath) -> [String] {
        let root = URL(fileURLWithPath: sourceFile).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let dir = root.appendingPathComponent("Tests/MQTTPluginTests/Fixtures")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap {
            try? String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8)
        }
    }

    // MARK: Running

    /// Runs `options.count` inputs; returns the report. Aborts the process on a hang.
    public mutating func run(progress: ((Report) -> Void)? = nil) -> Report {
        var report = Report()
        let watchdog = Watchdog(limit: options.hangSeconds)
        watchdog.start()
        defer { watchdog.stop() }
        var harness = MQTTInputHarness()
        let started = Date()
        for i in 0..<options.count {
            if i % 256 == 0 { harness = MQTTInputHarness() }  // bounded memory; fresh state now and then
            let kind: String
            let inputStarted = DispatchTime.now().uptimeNanoseconds
            var ok: Bool
            switch i % 8 {
            case 0, 1, 2:
                kind = "discovery"
                let (topic, payload) = discoveryInput()
                watchdog.begin("discovery \(topic): \(Self.preview(payload))")
                harness.receive(topic: topic, payload: payload)
                ok = harness.entityCount > 0
                for route in harness.routedTopics.prefix(4) {
                    let state = jsonInput()
                    watchdog.begin("state \(route): \(Self.preview(state))")
                    harness.receive(topic: route, payload: state)
                }
                if i % 64 == 0 {
                    watchdog.begin("commands after \(topic): \(Self.preview(payload))")
                    harness.commandEverything(arguments: MQTTInputHarness.extremeArguments)
                }
            case 3, 4:
                kind = "template"
                let source = templateInput()
                let payload = jsonInput()
                watchdog.begin("template \(source.debugDescription.prefix(2000)) on \(Self.preview(payload))")
                if case .success = MQTTInputHarness.renderTemplate(source, payload: payload) { ok = true } else { ok = false }
            case 5:
                kind = "json"
                let bytes = jsonInput()
                watchdog.begin("json \(Self.preview(bytes))")
                ok = bytes.withUnsafeBytes { (try? JSONParser.parse($0)) != nil }
            default:
                kind = "wire"
                let (value, bytes) = wireInput()
                watchdog.begin("wire \(Self.preview(bytes))")
                ok = Self.decodeWire(value, bytes)
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - inputStarted) / 1e9
            if seconds > report.slowestSeconds {
                report.slowestSeconds = seconds
                report.slowestKind = kind
            }
            report.inputs += 1
            report.byKind[kind, default: 0] += 1
            if ok { report.accepted += 1 } else { report.refused += 1 }
            if let progress, i % 100_000 == 99_999 {
                report.seconds = Date().timeIntervalSince(started)
                progress(report)
            }
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    static func preview(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(2000), as: UTF8.self)
        return text.debugDescription + (bytes.count > 2000 ? "… (\(bytes.count) bytes)" : "")
    }

    // MARK: Discovery configs

    mutating func discoveryInput() -> (String, [UInt8]) {
        let (topic, base) = corpus[rng.below(corpus.count)]
        var config = base.objectValue ?? [:]
        for _ in 0..<(1 + rng.below(3)) {
            let field = rng.pick(Self.fields)
            switch rng.below(6) {
            case 0: config[field] = nil
            case 1: config[field] = .string(templateInput())
            case 2:
                // Nest an existing value deeply (device, availability entries).
                var v = config[field] ?? .string("x")
                for _ in 0..<rng.below(80) { v = rng.bool() ? .list([v]) : .object(["t": v]) }
                config[field] = v
            default: config[field] = rng.pick(Self.hostileValues)
            }
        }
        var bytes = Array(Self.json(.object(config)).utf8)
        if rng.below(4) == 0 { mutateBytes(&bytes) }
        let topics = [topic, "homeassistant/light/x/config", "homeassistant/sensor/\(rng.below(1000))/config", "homeassistant//config"]
        return (rng.below(8) == 0 ? rng.pick(topics) : topic, bytes)
    }

    // MARK: Templates

    mutating func templateInput() -> String {
        switch rng.below(5) {
        case 0:
            // Deep nesting of one construct.
            let n = 1 + rng.below(3000)
            switch rng.below(5) {
            case 0: return "{{ " + String(repeating: "(", count: n) + "1" + String(repeating: ")", count: n) + " }}"
            case 1: return "{{ " + String(repeating: "not ", count: n) + "value }}"
            case 2: return "{{ value" + String(repeating: " + 1", count: n) + " }}"
            case 3: return String(repeating: "{% if value %}", count: n) + "x" + String(repeating: "{% endif %}", count: n)
            default: return "{{ " + String(repeating: "[", count: n) + String(repeating: "]", count: n) + " }}"
            }
        case 1:
            var bytes = Array(templateExpression(depth: 0).utf8)
            mutateBytes(&bytes)
            return String(decoding: bytes, as: UTF8.self)
        default:
            let body = "{{ " + templateExpression(depth: 0) + " }}"
            guard rng.below(4) == 0 else { return body }
            return "{% if " + templateExpression(depth: 0) + " %}" + body + "{% elif value %}y{% else %}z{% endif %}"
        }
    }

    mutating func templateExpression(depth: Int) -> String {
        if depth > 6 || rng.below(3) == 0 {
            var atom = rng.pick(Self.templateAtoms)
            for _ in 0..<rng.below(3) { atom += "|" + rng.pick(Self.templateFilters) }
            return atom
        }
        switch rng.below(5) {
        case 0: return "(" + templateExpression(depth: depth + 1) + ")"
        case 1: return "not " + templateExpression(depth: depth + 1)
        case 2: return templateExpression(depth: depth + 1) + " if " + templateExpression(depth: depth + 1) + " else " + templateExpression(depth: depth + 1)
        case 3: return "-" + templateExpression(depth: depth + 1)
        default: return templateExpression(depth: depth + 1) + " " + rng.pick(Self.templateOperators) + " " + templateExpression(depth: depth + 1)
        }
    }

    // MARK: JSON payloads

    mutating func jsonInput() -> [UInt8] {
        switch rng.below(6) {
        case 0: return Array(rng.pick(["ON", "OFF", "open", "128", "-1", "1e400", "nan", "", "online", "21.5"]).utf8)
        case 1:
            let n = 1 + rng.below(200)
            return Array((String(repeating: "[", count: n) + String(repeating: "]", count: n)).utf8)
        case 2: return (0..<rng.below(64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        default:
            var bytes = Array(Self.json(randomValue(depth: 0)).utf8)
            if rng.bool() { mutateBytes(&bytes) }
            return bytes
        }
    }

    mutating func randomValue(depth: Int) -> Value {
        if depth > 4 || rng.below(3) == 0 {
            return rng.below(3) == 0 ? rng.pick(Self.hostileValues) : rng.pick([
                .int(Int64(rng.below(300))), .double(Double(rng.below(100_000)) / 100), .string("ON"), .bool(rng.bool()), .null,
            ])
        }
        if rng.bool() {
            return .list((0..<rng.below(4)).map { _ in randomValue(depth: depth + 1) })
        }
        let keys = [
            "state", "brightness", "color_temp", "temperature", "position", "battery", "linkquality", "contact", "a", "x", "power",
            "pm25", "Wifi", "wifi_sta", "Signal", "rssi",
        ]
        var o: [String: Value] = [:]
        for _ in 0..<rng.below(5) { o[rng.pick(keys)] = randomValue(depth: depth + 1) }
        return .object(o)
    }

    // MARK: Wire protocol

    mutating func wireInput() -> (Value, [UInt8]) {
        let kinds = ["hello", "publish", "report", "emit", "command", "write", "result", "log", "remove"]
        var o: [String: Value] = ["type": .string(rng.pick(kinds)), "id": rng.pick([.int(1), .string("0x10"), .double(1e300), .string("nan")])]
        let parts: [String: Value] = [
            "device": .object(["localID": .string("d"), "name": .string("n"), "types": .list([.object(["id": .string("0x0100"), "isPrimary": .bool(true), "traits": .object(["0x0006": .object(["0x0000": .bool(true)])])])])]),
            "localID": .string("d"), "deviceType": .string("0x0100"), "trait": .string("0x0006"), "attribute": .int(0),
            "command": .int(1), "arguments": .object([:]), "value": .int(1), "manifest": .object(["id": .string("x"), "name": .string("x"), "version": .string("1")]),
            "event": .int(1), "fields": .object([:]), "ok": .bool(true), "error": .object(["code": .string("timeout"), "message": .string("m")]),
        ]
        for (k, v) in parts where rng.bool() { o[k] = v }
        for _ in 0..<rng.below(3) { o[rng.pick(Array(parts.keys).sorted())] = randomValue(depth: 0) }
        let value = Value.object(o)
        var bytes = Array(Self.json(value).utf8)
        if rng.below(3) == 0 { mutateBytes(&bytes) }
        return (value, bytes)
    }

    /// Decodes one message the way the host and a child do: the frame's JSON into a ``Value``
    /// (Foundation's decoder, as ``FrameChannel`` does), then every protocol reader.
    static func decodeWire(_ generated: Value, _ bytes: [UInt8]) -> Bool {
        var accepted = false
        let decoded = try? JSONDecoder().decode(Value.self, from: Data(bytes))
        for value in [generated, decoded].compactMap({ $0 }) {
            let o = value.objectValue ?? [:]
            if (try? PluginWire.manifest(o["manifest"])) != nil { accepted = true }
            if (try? PluginWire.configuration(o["configuration"] ?? value)) != nil { accepted = true }
            if (try? PluginWire.device(o["device"])) != nil { accepted = true }
            if (try? PluginWire.report(value)) != nil { accepted = true }
            if (try? PluginWire.event(value)) != nil { accepted = true }
            if (try? PluginWire.command(o)) != nil { accepted = true }
            if (try? PluginWire.write(o)) != nil { accepted = true }
            if case .success = PluginWire.outcome(o) { accepted = true }
        }
        return accepted
    }

    // MARK: Helpers

    mutating func mutateBytes(_ bytes: inout [UInt8]) {
        for _ in 0..<(1 + rng.below(4)) {
            let at = bytes.isEmpty ? 0 : rng.below(bytes.count)
            switch rng.below(5) {
            case 0 where !bytes.isEmpty: bytes[at] = UInt8(truncatingIfNeeded: rng.next())
            case 1 where !bytes.isEmpty: bytes.remove(at: at)
            case 2: bytes.insert(rng.pick([0x00, 0xFF, 0xC3, 0x22, 0x5C, 0x7B, 0x5B, 0x2D, 0x30]), at: at)
            case 3 where !bytes.isEmpty: bytes.removeSubrange(at..<min(bytes.count, at + rng.below(32)))
            default:
                let start = bytes.isEmpty ? 0 : rng.below(bytes.count)
                let slice = bytes[start..<min(bytes.count, start + rng.below(64))]
                bytes.insert(contentsOf: slice, at: at)
            }
        }
    }

    /// Compact JSON for a value (numbers that JSON cannot hold become strings).
    static func json(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : "\"\(d)\""
        case .string(let s):
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                default:
                    if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
                }
            }
            return out + "\""
        case .list(let l): return "[" + l.map(json).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.keys.sorted().map { json(.string($0)) + ":" + json(o[$0]!) }.joined(separator: ",") + "}"
        }
    }
}

/// A small, fast, seeded generator (SplitMix64), so every run can be repeated from its seed.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }
    mutating func bool() -> Bool { next() & 1 == 1 }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Aborts the process, printing the input, when one input runs longer than the limit.
final class Watchdog: @unchecked Sendable {
    // @unchecked: every field but `limit` is guarded by `lock`.
    let limit: Double
    let lock = NSLock()
    var current = ""
    var since = Date()
    var running = false

    init(limit: Double) { self.limit = limit }

    func begin(_ input: String) {
        lock.lock()
        current = input
        since = Date()
        lock.unlock()
    }

    func start() {
        lock.lock()
        running = true
        since = Date()
        lock.unlock()
        let thread = Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: 0.5)
                lock.lock()
                let (stillRunning, elapsed, input) = (running, Date().timeIntervalSince(since), current)
                lock.unlock()
                guard stillRunning else { return }
                if elapsed > limit {
                    FileHandle.standardError.write(Data("mqtt-fuzz: HANG: one input ran \(Int(elapsed)) s: \(input)\n".utf8))
                    abort()
                }
            }
        }
        thread.start()
    }

    func stop() {
        lock.lock()
        running = false
        lock.unlock()
    }
}
