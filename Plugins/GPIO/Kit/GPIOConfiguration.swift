public import DriverAPI
import Foundation
public import HomeModel

/// The `plugins.gpio` section of `hearth.yaml`.
///
/// ```yaml
/// gpio:
///   simulated:                      # chips that exist only in memory (no hardware needed)
///     - chip: sim0
///       lines: [GPIO0, GPIO1, GPIO2, GPIO3]
///       control: /tmp/hearth-gpio-sim   # echo "sim0 GPIO0 pull-up" > /tmp/hearth-gpio-sim/control
///   lines:
///     - chip: gpiochip0             # name, label (pinctrl-rp1) or path
///       line: GPIO17                # offset or line name
///       role: contact
///       active-low: true
///       bias: pull-up
///       debounce: 20ms
///       name: Front door
///       room: Hallway
/// ```
public struct GPIOConfiguration: Decodable, Sendable, Hashable {
    public var lines: [LineConfiguration]
    public var simulated: [SimulatedChipConfiguration]
    /// How often chips and lines that failed are tried again.
    public var retry: ConfigDuration
    /// Where `initial: restore` outputs keep their last state (a small JSON file).
    public var stateFile: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case lines, simulated, retry
        case stateFile = "state-file"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        lines = try c.decodeIfPresent([LineConfiguration].self, forKey: .lines) ?? []
        simulated = try c.decodeIfPresent([SimulatedChipConfiguration].self, forKey: .simulated) ?? []
        retry = try c.decodeIfPresent(ConfigDuration.self, forKey: .retry) ?? ConfigDuration(.seconds(5))
        stateFile = try c.decodeIfPresent(String.self, forKey: .stateFile)
    }

    /// Decodes and checks the section.
    /// - Throws: ``HomeError`` `invalidArgument` naming the file, line and key path.
    public static func load(_ configuration: PluginConfiguration) throws(HomeError) -> GPIOConfiguration {
        try checkKeys(configuration)
        let config = try configuration.decode(GPIOConfiguration.self)
        try config.check(configuration)
        return config
    }

    /// Unknown keys are refused (a misspelt `activelow` must not be silently ignored).
    static func checkKeys(_ configuration: PluginConfiguration) throws(HomeError) {
        guard let top = configuration.value.objectValue else { return }
        func refuse(_ keys: [String: Value], allowed: [String], at path: String) throws(HomeError) {
            for key in keys.keys.sorted() where !allowed.contains(key) {
                let hint = allowed.first { $0.replacingOccurrences(of: "-", with: "") == key.lowercased().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "_", with: "") }
                let p = path.isEmpty ? key : "\(path).\(key)"
                throw HomeError.invalidArgument(
                    configuration.problem(
                        at: p, "unknown key '\(key)'" + (hint.map { "; did you mean '\($0)'?" } ?? "; known keys: \(allowed.joined(separator: ", "))")))
            }
        }
        try refuse(top, allowed: CodingKeys.allCases.map(\.rawValue), at: "")
        for (i, line) in (top["lines"]?.listValue ?? []).enumerated() {
            if let o = line.objectValue { try refuse(o, allowed: LineConfiguration.CodingKeys.allCases.map(\.rawValue), at: "lines[\(i)]") }
        }
        for (i, chip) in (top["simulated"]?.listValue ?? []).enumerated() {
            if let o = chip.objectValue {
                try refuse(o, allowed: SimulatedChipConfiguration.CodingKeys.allCases.map(\.rawValue), at: "simulated[\(i)]")
            }
        }
    }

    func check(_ configuration: PluginConfiguration) throws(HomeError) {
        func fail(_ path: String, _ message: String) -> HomeError { .invalidArgument(configuration.problem(at: path, message)) }
        if retry.duration < .milliseconds(100) { throw fail("retry", "must be at least 100ms") }
        var ids: [String: Int] = [:]
        var places: [String: Int] = [:]
        for (i, line) in lines.enumerated() {
            let at = "lines[\(i)]"
            if line.chip.isEmpty { throw fail("\(at).chip", "must name a chip (gpiochip0, a label such as pinctrl-rp1, or a path)") }
            if case .offset(let o) = line.line, o < 0 { throw fail("\(at).line", "an offset cannot be negative") }
            if let other = ids[line.localID] {
                throw fail(
                    line.id == nil ? "\(at).line" : "\(at).id",
                    "device id '\(line.localID)' is already used by lines[\(other)]; give one of them a different 'id'")
            }
            ids[line.localID] = i
            let place = "\(line.chip)/\(line.line)"
            if let other = places[place] { throw fail("\(at).line", "\(line.line) of chip \(line.chip) is already used by lines[\(other)]") }
            places[place] = i
            if let status = line.statusLine {
                let statusPlace = "\(line.chip)/\(status)"
                if let other = places[statusPlace] {
                    throw fail("\(at).status-line", "\(status) of chip \(line.chip) is already used by lines[\(other)]")
                }
                places[statusPlace] = i
                if !line.role.isOutput { throw fail("\(at).status-line", "only outputs (relay, light, plug) take a status line") }
            }
            if let name = line.name {
                let verdict = NamingRules.check(name)
                if !verdict.isValid {
                    throw fail("\(at).name", "'\(name)' is not a valid device name: " + verdict.violations.map(\.rule).joined(separator: "; "))
                }
            }
            if line.room != nil, line.name == nil { throw fail("\(at).room", "a room needs a 'name' for the device too") }
            if line.identify, !line.role.isOutput {
                throw fail("\(at).identify", "only outputs (relay, light, plug) can blink to identify; an input has no way to show itself")
            }
            if line.debounce.duration > .seconds(10) { throw fail("\(at).debounce", "must be at most 10s") }
            if line.role.isOutput {
                if line.debounce.duration > .zero { throw fail("\(at).debounce", "outputs are not debounced") }
                if line.bias != nil { throw fail("\(at).bias", "a bias applies to inputs only") }
                if !line.chatterGuard { throw fail("\(at).chatter-guard", "outputs are not guarded against chatter; it applies to inputs only") }
            } else if line.initial != nil {
                throw fail("\(at).initial", "only outputs (relay, light, plug) have an initial state")
            }
            if line.initial == .restore, stateFile == nil {
                throw fail("\(at).initial", "'restore' needs 'state-file' in plugins.gpio (where the last state is kept)")
            }
            if line.holdOn != nil, !(line.role == .occupancy || line.role == .motion) {
                throw fail("\(at).hold-on", "only occupancy and motion sensors have a hold-on time")
            }
            if line.role != .button, line.longPress != nil || line.multiPressWindow != nil || line.multiPressMax != nil {
                throw fail("\(at).role", "long-press, multi-press-window and multi-press-max apply to role 'button' only")
            }
            if let max = line.multiPressMax, !(2...255).contains(max) { throw fail("\(at).multi-press-max", "must be between 2 and 255") }
            if let l = line.longPress, l.duration < .milliseconds(50) { throw fail("\(at).long-press", "must be at least 50ms") }
        }
        var simulatedNames = Set<String>()
        for (i, chip) in simulated.enumerated() {
            if !simulatedNames.insert(chip.chip).inserted { throw fail("simulated[\(i)].chip", "chip '\(chip.chip)' is declared twice") }
            if chip.lineNames.isEmpty { throw fail("simulated[\(i)].lines", "a simulated chip needs at least one line") }
        }
    }
}

/// One configured line: a device.
public struct LineConfiguration: Decodable, Sendable, Hashable {
    /// The device's stable local ID (default: `<chip>-<line>`, lowercased).
    public var id: String?
    public var chip: String
    public var line: LineReference
    public var role: LineRole
    public var activeLow: Bool
    /// Pull resistor (inputs); nil leaves it as it is.
    public var bias: GPIOBias?
    public var debounce: ConfigDuration
    public var name: String?
    public var room: String?
    /// Occupancy/motion: how long occupancy holds after the sensor goes quiet.
    public var holdOn: ConfigDuration?
    /// Button: how long a press lasts before it is a long press.
    public var longPress: ConfigDuration?
    /// Button: how long after a release another press still counts to the same multi-press.
    public var multiPressWindow: ConfigDuration?
    public var multiPressMax: Int?
    /// Outputs: the state when the plugin starts.
    public var initial: InitialState?
    /// Outputs: a separate input that reports the real state (a light with a status line).
    public var statusLine: LineReference?
    /// Who made what is wired to the line (shown as the device's `BasicInformation`):
    /// `vendor`, `model`, `serial-number`, `hardware-version`; Hearth's own values where absent.
    public var vendor: String?
    public var model: String?
    public var serialNumber: String?
    public var hardwareVersion: String?
    /// Outputs: whether the device offers Identify, blinking the output (once a second) while it
    /// identifies. Off unless set: blinking a pump, a heater or a garage door is not safe.
    public var identify: Bool
    /// Inputs: whether a chattering line is set aside (``ChatterGuard``). On unless set off: a
    /// pulse output (a flow or energy meter, a fast counter) changes that often on purpose.
    public var chatterGuard: Bool

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, chip, line, role, bias, debounce, name, room, initial, vendor, model, identify
        case activeLow = "active-low"
        case holdOn = "hold-on"
        case longPress = "long-press"
        case multiPressWindow = "multi-press-window"
        case multiPressMax = "multi-press-max"
        case statusLine = "status-line"
        case serialNumber = "serial-number"
        case hardwareVersion = "hardware-version"
        case chatterGuard = "chatter-guard"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeIfPresent(String.self, forKey: .id)
        chip = try c.decode(String.self, forKey: .chip)
        line = try c.decode(LineReference.self, forKey: .line)
        role = try c.decode(LineRole.self, forKey: .role)
        activeLow = try c.decodeIfPresent(Bool.self, forKey: .activeLow) ?? false
        bias = try c.decodeIfPresent(GPIOBias.self, forKey: .bias)
        debounce = try c.decodeIfPresent(ConfigDuration.self, forKey: .debounce) ?? ConfigDuration(.zero)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        room = try c.decodeIfPresent(String.self, forKey: .room)
        holdOn = try c.decodeIfPresent(ConfigDuration.self, forKey: .holdOn)
        longPress = try c.decodeIfPresent(ConfigDuration.self, forKey: .longPress)
        multiPressWindow = try c.decodeIfPresent(ConfigDuration.self, forKey: .multiPressWindow)
        multiPressMax = try c.decodeIfPresent(Int.self, forKey: .multiPressMax)
        initial = try c.decodeIfPresent(InitialState.self, forKey: .initial)
        statusLine = try c.decodeIfPresent(LineReference.self, forKey: .statusLine)
        vendor = try c.decodeIfPresent(String.self, forKey: .vendor)
        model = try c.decodeIfPresent(String.self, forKey: .model)
        serialNumber = try c.decodeIfPresent(String.self, forKey: .serialNumber)
        hardwareVersion = try c.decodeIfPresent(String.self, forKey: .hardwareVersion)
        identify = try c.decodeIfPresent(Bool.self, forKey: .identify) ?? false
        chatterGuard = try c.decodeIfPresent(Bool.self, forKey: .chatterGuard) ?? true
    }

    /// The device's local ID.
    public var localID: String {
        if let id { return id }
        let raw = "\(chip.split(separator: "/").last ?? "")-\(line)".lowercased()
        return String(raw.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" })
    }
}

/// A line by offset (`17`) or by name (`GPIO17`).
public enum LineReference: Decodable, Sendable, Hashable, CustomStringConvertible {
    case offset(Int)
    case name(String)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let i = try? c.decode(Int.self) {
            self = .offset(i)
        } else if let s = try? c.decode(String.self) {
            self = s.isEmpty ? .offset(-1) : (Int(s).map { .offset($0) } ?? .name(s))
        } else {
            throw DecodingError.typeMismatch(
                String.self, .init(codingPath: decoder.codingPath, debugDescription: "a line is an offset (17) or a line name (GPIO17)"))
        }
    }

    public var description: String {
        switch self {
        case .offset(let o): "\(o)"
        case .name(let n): n
        }
    }
}

/// What a line is.
public enum LineRole: String, Decodable, Sendable, Hashable, CaseIterable {
    case contact, occupancy, motion, leak, rain, freeze, smoke, boolean
    case button
    case toggleSwitch = "toggle-switch"
    case relay, light, plug

    public var isOutput: Bool { self == .relay || self == .light || self == .plug }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let raw = try c.decode(String.self)
        guard let role = LineRole(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(
                in: c, debugDescription: "unknown role '\(raw)'; one of: \(LineRole.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = role
    }
}

/// An output's state when the plugin starts.
public enum InitialState: String, Decodable, Sendable, Hashable {
    case off, on, restore

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            self = b ? .on : .off
            return
        }
        let raw = try c.decode(String.self)
        guard let v = InitialState(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "unknown initial state '\(raw)'; one of: off, on, restore")
        }
        self = v
    }
}

/// A simulated chip.
public struct SimulatedChipConfiguration: Decodable, Sendable, Hashable {
    public var chip: String
    public var label: String?
    /// Line names, or a count (lines are then named `GPIO0`…).
    public var lineNames: [String]
    /// A directory for the control FIFO and the state file (nil: driven only in-process).
    public var control: String?

    enum CodingKeys: String, CodingKey, CaseIterable { case chip, label, lines, control }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        chip = try c.decode(String.self, forKey: .chip)
        label = try c.decodeIfPresent(String.self, forKey: .label)
        control = try c.decodeIfPresent(String.self, forKey: .control)
        if let count = try? c.decode(Int.self, forKey: .lines) {
            guard (1...512).contains(count) else {
                throw DecodingError.dataCorruptedError(forKey: .lines, in: c, debugDescription: "between 1 and 512 lines")
            }
            lineNames = (0..<count).map { "GPIO\($0)" }
        } else {
            lineNames = try c.decode([String].self, forKey: .lines)
        }
    }
}

/// A duration written as `20ms`, `1.5s`, `2min`, or a bare number of seconds.
public struct ConfigDuration: Decodable, Sendable, Hashable {
    public var duration: Duration

    public init(_ duration: Duration) { self.duration = duration }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let seconds = try? c.decode(Double.self) {
            guard seconds >= 0 else { throw DecodingError.dataCorruptedError(in: c, debugDescription: "a duration cannot be negative") }
            duration = .milliseconds(Int64((seconds * 1000).rounded()))
            return
        }
        let text = try c.decode(String.self).trimmingCharacters(in: .whitespaces)
        guard let d = Self.parse(text) else {
            throw DecodingError.dataCorruptedError(
                in: c, debugDescription: "'\(text)' is not a duration; write it as 20ms, 1.5s or 2min (a bare number is seconds)")
        }
        duration = d
    }

    static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 1), ("min", 60_000), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        for (suffix, ms) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)
            guard let v = Double(number), v >= 0, v.isFinite else { return nil }
            return .microseconds(Int64((v * ms * 1000).rounded()))
        }
        guard let v = Double(text), v >= 0, v.isFinite else { return nil }
        return .milliseconds(Int64((v * 1000).rounded()))
    }
}
