public import HomeModel
public import Foundation

/// An automation as a user writes it (the `automations:` entries of `hearth.yaml`, the JSON
/// body of the API): names as the catalogue spells them, resolved by ``AutomationCompiler``.
///
/// ```yaml
/// - id: hall-light
///   name: Hall light
///   mode: restart
///   starters:
///     - { id: press, event: { device: gpio:hall-button, trait: Switch, event: InitialPress } }
///   actions:
///     - command: { device: gpio:hall-relay, trait: OnOff, command: On }
///     - delay: 5m
///     - command: { device: gpio:hall-relay, trait: OnOff, command: Off }
/// ```
public struct Automation: Hashable, Sendable, Codable {
    public var id: String
    public var name: String
    public var description: String?
    public var enabled: Bool?
    public var mode: Mode?
    public var maxRuns: Int?
    public var suppressFor: Span?
    public var onRestart: OnRestart?
    public var catchUp: Span?
    public var maxExecutions: Int?
    public var allowSensitive: Bool?
    public var starters: [Starter]
    public var conditions: Condition?
    public var actions: [Action]

    public init(
        id: String, name: String, description: String? = nil, enabled: Bool? = nil, mode: Mode? = nil, maxRuns: Int? = nil,
        suppressFor: Span? = nil, onRestart: OnRestart? = nil, catchUp: Span? = nil, maxExecutions: Int? = nil,
        allowSensitive: Bool? = nil, starters: [Starter], conditions: Condition? = nil, actions: [Action]
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.enabled = enabled
        self.mode = mode
        self.maxRuns = maxRuns
        self.suppressFor = suppressFor
        self.onRestart = onRestart
        self.catchUp = catchUp
        self.maxExecutions = maxExecutions
        self.allowSensitive = allowSensitive
        self.starters = starters
        self.conditions = conditions
        self.actions = actions
    }

    /// What happens when it starts while a run is going (Home Assistant's modes).
    public enum Mode: String, Hashable, Sendable, Codable, CaseIterable { case single, restart, queued, parallel }
    /// Whether a delay or wait interrupted by a restart resumes (with its remaining time).
    public enum OnRestart: String, Hashable, Sendable, Codable { case resume, abandon }

    public var effectiveMode: Mode { mode ?? .single }
    public var effectiveMaxRuns: Int { maxRuns ?? 10 }
    public var isEnabled: Bool { enabled ?? true }
}

/// A duration written as `200ms`, `30s`, `5m`, `6h`, `7d`, `1h30m`, or a number of seconds.
public struct Span: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    public static func seconds(_ s: Int64) -> Span { Span(milliseconds: s * 1000) }
    public static func minutes(_ m: Int64) -> Span { Span(milliseconds: m * 60_000) }

    public var duration: Duration { .milliseconds(milliseconds) }
    public var timeInterval: TimeInterval { Double(milliseconds) / 1000 }

    /// Parses `1h30m`, `200ms`, `-30m` (offsets), `45` (seconds); nil when malformed.
    public init?(parsing text: String) {
        var s = Substring(text.trimmingCharacters(in: .whitespaces))
        var sign: Int64 = 1
        if s.hasPrefix("-") { sign = -1; s = s.dropFirst() } else if s.hasPrefix("+") { s = s.dropFirst() }
        if let plain = Double(s) { self.init(milliseconds: sign * Int64((plain * 1000).rounded())); return }
        var total: Int64 = 0
        var number = ""
        var i = s.startIndex
        var any = false
        while i < s.endIndex {
            let c = s[i]
            if c.isNumber || c == "." {
                number.append(c)
                i = s.index(after: i)
                continue
            }
            var unit = String(c)
            let next = s.index(after: i)
            if c == "m", next < s.endIndex, s[next] == "s" { unit = "ms"; i = next }
            guard let n = Double(number) else { return nil }
            let factor: Double
            switch unit {
            case "ms": factor = 1
            case "s": factor = 1000
            case "m": factor = 60_000
            case "h": factor = 3_600_000
            case "d": factor = 86_400_000
            default: return nil
            }
            total += Int64((n * factor).rounded())
            number = ""
            any = true
            i = s.index(after: i)
        }
        guard number.isEmpty, any else { return nil }
        self.init(milliseconds: sign * total)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Double.self) {
            self.init(milliseconds: Int64((n * 1000).rounded()))
        } else {
            let text = try c.decode(String.self)
            guard let parsed = Span(parsing: text) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "'\(text)' is not a duration (write e.g. 30s, 5m, 1h30m, 200ms)")
            }
            self = parsed
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }

    public var description: String {
        var ms = abs(milliseconds)
        if ms == 0 { return "0s" }
        var out = milliseconds < 0 ? "-" : ""
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000)] where ms >= size {
            out += "\(ms / size)\(unit)"
            ms %= size
        }
        if ms > 0 { out += "\(ms)ms" }
        return out
    }

    public static func < (a: Span, b: Span) -> Bool { a.milliseconds < b.milliseconds }
}

/// Names a device's trait: `device` (its ID), an optional `type`, and the `trait`.
public struct Target: Hashable, Sendable, Codable {
    public var device: String
    public var type: String?
    public var trait: String
    public init(device: String, type: String? = nil, trait: String) {
        self.device = device
        self.type = type
        self.trait = trait
    }
}

// MARK: - Starters

/// What starts an automation; `id` names it for traces and the `starter` condition.
public struct Starter: Hashable, Sendable, Codable {
    public var id: String?
    public var kind: Kind

    public init(id: String? = nil, _ kind: Kind) {
        self.id = id
        self.kind = kind
    }

    public enum Kind: Hashable, Sendable {
        case attribute(AttributeStarter)
        case event(EventStarter)
        case connectivity(ConnectivityStarter)
        case time(TimeStarter)
        case sun(SunStarter)
        case manual
        case startup(after: Span?)
    }

    enum Keys: String, CodingKey { case id, attribute, event, connectivity, time, sun, manual, startup }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        id = try c.decodeIfPresent(String.self, forKey: .id)
        let kinds = c.allKeys.filter { $0 != .id }
        guard kinds.count == 1, let key = kinds.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: c.codingPath, debugDescription: "a starter has exactly one of: attribute, event, connectivity, time, sun, manual, startup"))
        }
        switch key {
        case .attribute: kind = .attribute(try c.decode(AttributeStarter.self, forKey: key))
        case .event: kind = .event(try c.decode(EventStarter.self, forKey: key))
        case .connectivity: kind = .connectivity(try c.decode(ConnectivityStarter.self, forKey: key))
        case .time: kind = .time(try c.decode(TimeStarter.self, forKey: key))
        case .sun: kind = .sun(try c.decode(SunStarter.self, forKey: key))
        case .manual: kind = .manual
        case .startup:
            let body = try? c.decode([String: Span].self, forKey: key)
            kind = .startup(after: body?["after"])
        case .id: fatalError("unreachable")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encodeIfPresent(id, forKey: .id)
        switch kind {
        case .attribute(let a): try c.encode(a, forKey: .attribute)
        case .event(let e): try c.encode(e, forKey: .event)
        case .connectivity(let x): try c.encode(x, forKey: .connectivity)
        case .time(let t): try c.encode(t, forKey: .time)
        case .sun(let s): try c.encode(s, forKey: .sun)
        case .manual: try c.encode([String: String](), forKey: .manual)
        case .startup(let after): try c.encode(after.map { ["after": $0] } ?? [:], forKey: .startup)
        }
    }
}

/// Fires when an attribute's value enters a state: `changes` (any change), `to`/`from`, or a
/// threshold `above`/`below` that re-arms only once the value is `hysteresis` back; `for`
/// requires the state to hold that long.
public struct AttributeStarter: Hashable, Sendable, Codable {
    public var device: String
    public var type: String?
    public var trait: String
    public var attribute: String
    public var changes: Bool?
    public var to: Value?
    public var from: Value?
    public var above: Double?
    public var below: Double?
    public var hysteresis: Double?
    public var `for`: Span?

    enum CodingKeys: String, CodingKey { case device, type, trait, attribute, changes, to, from, above, below, hysteresis, `for` }

    /// `to: null` / `from: null` are the attribute's null value (a nullable attribute that has
    /// none), not "absent".
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        device = try c.decode(String.self, forKey: .device)
        type = try c.decodeIfPresent(String.self, forKey: .type)
        trait = try c.decode(String.self, forKey: .trait)
        attribute = try c.decode(String.self, forKey: .attribute)
        changes = try c.decodeIfPresent(Bool.self, forKey: .changes)
        to = try c.decodeNullable(.to)
        from = try c.decodeNullable(.from)
        above = try c.decodeIfPresent(Double.self, forKey: .above)
        below = try c.decodeIfPresent(Double.self, forKey: .below)
        hysteresis = try c.decodeIfPresent(Double.self, forKey: .hysteresis)
        self.for = try c.decodeIfPresent(Span.self, forKey: .for)
    }

    public init(
        device: String, type: String? = nil, trait: String, attribute: String, changes: Bool? = nil, to: Value? = nil, from: Value? = nil,
        above: Double? = nil, below: Double? = nil, hysteresis: Double? = nil, for hold: Span? = nil
    ) {
        self.device = device
        self.type = type
        self.trait = trait
        self.attribute = attribute
        self.changes = changes
        self.to = to
        self.from = from
        self.above = above
        self.below = below
        self.hysteresis = hysteresis
        self.for = hold
    }
}

/// Fires on a device event (Switch InitialPress, LongPress, MultiPressComplete…) whose
/// fields match `where` (`{TotalNumberOfPressesCounted: 2}`).
public struct EventStarter: Hashable, Sendable, Codable {
    public var device: String
    public var type: String?
    public var trait: String
    public var event: String
    public var `where`: [String: Value]?
    public init(device: String, type: String? = nil, trait: String, event: String, where fields: [String: Value]? = nil) {
        self.device = device
        self.type = type
        self.trait = trait
        self.event = event
        self.where = fields
    }
}

/// Fires when a device goes `offline` or comes `online` (and stays so `for` a while).
public struct ConnectivityStarter: Hashable, Sendable, Codable {
    public var device: String
    public var to: String
    public var `for`: Span?
    public init(device: String, to: String, for hold: Span? = nil) {
        self.device = device
        self.to = to
        self.for = hold
    }
}

/// Fires at a local time (`at: "06:30"`, optional `days: [mon, tue]`), `every` interval
/// (aligned to the hour), or `once` at a local date and time (`2026-12-24T18:00`).
public struct TimeStarter: Hashable, Sendable, Codable {
    public var at: String?
    public var days: [String]?
    public var every: Span?
    public var once: String?
    public init(at: String? = nil, days: [String]? = nil, every: Span? = nil, once: String? = nil) {
        self.at = at
        self.days = days
        self.every = every
        self.once = once
    }
}

/// Fires at sunrise, sunset, dawn, dusk or solar noon, with an offset (computed locally).
public struct SunStarter: Hashable, Sendable, Codable {
    public var event: String
    public var offset: Span?
    public init(event: String, offset: Span? = nil) {
        self.event = event
        self.offset = offset
    }
}

// MARK: - Conditions

/// A condition tree: `all`/`any`/`not` over leaves.
public indirect enum Condition: Hashable, Sendable, Codable {
    case all([Condition])
    case any([Condition])
    case not(Condition)
    case attribute(AttributeCondition)
    case time(TimeCondition)
    /// The sun: up or down, or the local time against the day's sunrise, sunset, dawn, dusk.
    case sun(SunCondition)
    /// Which starter fired (its `id`).
    case starter(String)
    /// Whether a scene is active.
    case scene(String)
    case connectivity(device: String, is: String)

    enum Keys: String, CodingKey { case all, any, not, attribute, time, sun, starter, scene, connectivity }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: c.codingPath, debugDescription: "a condition has exactly one of: all, any, not, attribute, time, sun, starter, scene, connectivity"))
        }
        switch key {
        case .all: self = .all(try c.decode([Condition].self, forKey: key))
        case .any: self = .any(try c.decode([Condition].self, forKey: key))
        case .not: self = .not(try c.decode(Condition.self, forKey: key))
        case .attribute: self = .attribute(try c.decode(AttributeCondition.self, forKey: key))
        case .time: self = .time(try c.decode(TimeCondition.self, forKey: key))
        case .sun: self = .sun(try c.decode(SunCondition.self, forKey: key))
        case .starter: self = .starter(try c.decode(String.self, forKey: key))
        case .scene: self = .scene(try c.decode(String.self, forKey: key))
        case .connectivity:
            let body = try c.decode([String: String].self, forKey: key)
            self = .connectivity(device: body["device"] ?? "", is: body["is"] ?? "online")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .all(let l): try c.encode(l, forKey: .all)
        case .any(let l): try c.encode(l, forKey: .any)
        case .not(let x): try c.encode(x, forKey: .not)
        case .attribute(let a): try c.encode(a, forKey: .attribute)
        case .time(let t): try c.encode(t, forKey: .time)
        case .sun(let x): try c.encode(x, forKey: .sun)
        case .starter(let s): try c.encode(s, forKey: .starter)
        case .scene(let s): try c.encode(s, forKey: .scene)
        case .connectivity(let d, let s): try c.encode(["device": d, "is": s], forKey: .connectivity)
        }
    }
}

/// An attribute's current value: `equals`, `in`, `above`, `below` (all given must hold).
public struct AttributeCondition: Hashable, Sendable, Codable {
    public var device: String
    public var type: String?
    public var trait: String
    public var attribute: String
    public var equals: Value?
    public var `in`: [Value]?
    public var above: Double?
    public var below: Double?
    enum CodingKeys: String, CodingKey { case device, type, trait, attribute, equals, `in`, above, below }

    /// `equals: null` is the attribute's null value, not "absent".
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        device = try c.decode(String.self, forKey: .device)
        type = try c.decodeIfPresent(String.self, forKey: .type)
        trait = try c.decode(String.self, forKey: .trait)
        attribute = try c.decode(String.self, forKey: .attribute)
        equals = try c.decodeNullable(.equals)
        self.in = try c.decodeIfPresent([Value].self, forKey: .in)
        above = try c.decodeIfPresent(Double.self, forKey: .above)
        below = try c.decodeIfPresent(Double.self, forKey: .below)
    }

    public init(
        device: String, type: String? = nil, trait: String, attribute: String, equals: Value? = nil, in values: [Value]? = nil,
        above: Double? = nil, below: Double? = nil
    ) {
        self.device = device
        self.type = type
        self.trait = trait
        self.attribute = attribute
        self.equals = equals
        self.in = values
        self.above = above
        self.below = below
    }
}

/// Local time of day between `after` and `before` (wrapping midnight), on `days`.
public struct TimeCondition: Hashable, Sendable, Codable {
    public var after: String?
    public var before: String?
    public var days: [String]?
    public init(after: String? = nil, before: String? = nil, days: [String]? = nil) {
        self.after = after
        self.before = before
        self.days = days
    }
}

/// The sun, computed locally from the home's location: `isUp` (its upper limb above the
/// horizon, as at sunrise and sunset), or the local time `after` and/or `before` one of the
/// day's sun events with an offset (`sunset-30m`, `sunrise+10m`, `dusk`); with both, the
/// window wraps midnight like a time condition (`after: sunset, before: sunrise` is the night).
public struct SunCondition: Hashable, Sendable, Codable {
    public var after: String?
    public var before: String?
    public var isUp: Bool?
    public init(after: String? = nil, before: String? = nil, isUp: Bool? = nil) {
        self.after = after
        self.before = before
        self.isUp = isUp
    }
}

/// A sun event with an offset, written `sunset-30m`, `sunrise+10m`, `dusk`, `solarNoon+1h`.
public struct SunInstant: Hashable, Sendable, CustomStringConvertible {
    public var event: SolarCalculator.Event
    public var offset: Span

    public init(_ event: SolarCalculator.Event, offset: Span = Span(milliseconds: 0)) {
        self.event = event
        self.offset = offset
    }

    /// nil when it is not an event name (case ignored) followed by nothing or a signed duration.
    public init?(parsing text: String) {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard let event = SolarCalculator.Event.allCases.first(where: { t.lowercased().hasPrefix($0.rawValue.lowercased()) }) else { return nil }
        let rest = t.dropFirst(event.rawValue.count).trimmingCharacters(in: .whitespaces)
        if rest.isEmpty {
            self.init(event)
            return
        }
        guard rest.hasPrefix("+") || rest.hasPrefix("-"), let span = Span(parsing: rest.replacingOccurrences(of: " ", with: "")) else { return nil }
        self.init(event, offset: span)
    }

    public var description: String {
        offset.milliseconds == 0
            ? event.rawValue : "\(event.rawValue)\(offset.milliseconds < 0 ? "-" : "+")\(Span(milliseconds: abs(offset.milliseconds)))"
    }
}

// MARK: - Actions

/// One step of an automation's actions.
public indirect enum Action: Hashable, Sendable, Codable {
    case command(CommandAction)
    case write(WriteAction)
    case scene(String)
    case delay(Span)
    case waitFor(WaitFor)
    case `if`(IfAction)
    case parallel([Action])
    case stop(reason: String?, error: Bool)
    case run(String)
    case log(String)
    case notify(String)
    /// An MQTT message to the automation broker (`automationBroker`/exposure broker of hearthd).
    case publish(PublishAction)
    /// An HTTP POST to a URL, with a timeout.
    case webhook(WebhookAction)

    enum Keys: String, CodingKey { case command, write, scene, delay, waitFor, `if`, parallel, stop, run, log, notify, publish, webhook }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: c.codingPath, debugDescription: "an action has exactly one of: command, write, scene, delay, waitFor, if, parallel, stop, run, log, notify, publish, webhook"))
        }
        switch key {
        case .command: self = .command(try c.decode(CommandAction.self, forKey: key))
        case .write: self = .write(try c.decode(WriteAction.self, forKey: key))
        case .scene: self = .scene(try c.decode(String.self, forKey: key))
        case .delay: self = .delay(try c.decode(Span.self, forKey: key))
        case .waitFor: self = .waitFor(try c.decode(WaitFor.self, forKey: key))
        case .if: self = .if(try c.decode(IfAction.self, forKey: key))
        case .parallel: self = .parallel(try c.decode([Action].self, forKey: key))
        case .stop:
            if let reason = try? c.decode(String.self, forKey: key) {
                self = .stop(reason: reason, error: false)
            } else {
                let body = try c.decode(StopBody.self, forKey: key)
                self = .stop(reason: body.reason, error: body.error ?? false)
            }
        case .run: self = .run(try c.decode(String.self, forKey: key))
        case .log: self = .log(try c.decode(String.self, forKey: key))
        case .notify: self = .notify(try c.decode(String.self, forKey: key))
        case .publish: self = .publish(try c.decode(PublishAction.self, forKey: key))
        case .webhook: self = .webhook(try c.decode(WebhookAction.self, forKey: key))
        }
    }

    struct StopBody: Codable {
        var reason: String?
        var error: Bool?
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .command(let x): try c.encode(x, forKey: .command)
        case .write(let x): try c.encode(x, forKey: .write)
        case .scene(let x): try c.encode(x, forKey: .scene)
        case .delay(let x): try c.encode(x, forKey: .delay)
        case .waitFor(let x): try c.encode(x, forKey: .waitFor)
        case .if(let x): try c.encode(x, forKey: .if)
        case .parallel(let x): try c.encode(x, forKey: .parallel)
        case .stop(let reason, let error): try c.encode(StopBody(reason: reason, error: error), forKey: .stop)
        case .run(let x): try c.encode(x, forKey: .run)
        case .log(let x): try c.encode(x, forKey: .log)
        case .notify(let x): try c.encode(x, forKey: .notify)
        case .publish(let x): try c.encode(x, forKey: .publish)
        case .webhook(let x): try c.encode(x, forKey: .webhook)
        }
    }
}

/// `publish: {topic, payload, retain?}`: one MQTT message (QoS 1).
public struct PublishAction: Hashable, Sendable, Codable {
    public var topic: String
    /// Text as is; any other value is sent as its JSON.
    public var payload: Value
    public var retain: Bool?
    public init(topic: String, payload: Value, retain: Bool? = nil) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }
}

/// `webhook: {url, body?, timeout?}`: an HTTP POST (body as JSON; default: the run's cause),
/// failing the step on a non-2xx answer or after `timeout` (default 5 s, at most 60 s).
public struct WebhookAction: Hashable, Sendable, Codable {
    public var url: String
    public var body: Value?
    public var timeout: Span?
    public init(url: String, body: Value? = nil, timeout: Span? = nil) {
        self.url = url
        self.body = body
        self.timeout = timeout
    }
}

public struct CommandAction: Hashable, Sendable, Codable {
    public var device: String
    public var type: String?
    public var trait: String
    public var command: String
    public var args: [String: Value]?
    /// How long the step waits for the device's answer (100 ms – 10 min); past it the step
    /// fails as `timeout` (the command is not retried). Absent: the core's command timeout.
    public var timeout: Span?
    /// When the step fails (any error, its timeout included), the run goes on with the next
    /// step instead of ending as failed; the trace keeps the step's error.
    public var continueOnError: Bool?

    enum CodingKeys: String, CodingKey { case device, type, trait, command, args, timeout, continueOnError }

    /// YAML reads a bare `On`/`Off` as a boolean: `command: On` is the On/Off command.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        device = try c.decode(String.self, forKey: .device)
        type = try c.decodeIfPresent(String.self, forKey: .type)
        trait = try c.decode(String.self, forKey: .trait)
        if let flag = try? c.decode(Bool.self, forKey: .command) {
            command = flag ? "On" : "Off"
        } else {
            command = try c.decode(String.self, forKey: .command)
        }
        args = try c.decodeIfPresent([String: Value].self, forKey: .args)
        timeout = try c.decodeIfPresent(Span.self, forKey: .timeout)
        continueOnError = try c.decodeIfPresent(Bool.self, forKey: .continueOnError)
    }
    public init(
        device: String, type: String? = nil, trait: String, command: String, args: [String: Value]? = nil, timeout: Span? = nil,
        continueOnError: Bool? = nil
    ) {
        self.device = device
        self.type = type
        self.trait = trait
        self.command = command
        self.args = args
        self.timeout = timeout
        self.continueOnError = continueOnError
    }
}

public struct WriteAction: Hashable, Sendable, Codable {
    public var device: String
    public var type: String?
    public var trait: String
    public var attribute: String
    public var value: Value
    public init(device: String, type: String? = nil, trait: String, attribute: String, value: Value) {
        self.device = device
        self.type = type
        self.trait = trait
        self.attribute = attribute
        self.value = value
    }
}

/// Waits until a condition holds (checked at once and on every change), at most `timeout`.
public struct WaitFor: Hashable, Sendable, Codable {
    public var condition: Condition
    public var timeout: Span?
    /// `continue` (default) or `stop` when the timeout passes.
    public var onTimeout: String?

    enum Keys: String, CodingKey { case timeout, onTimeout }

    public init(_ condition: Condition, timeout: Span? = nil, onTimeout: String? = nil) {
        self.condition = condition
        self.timeout = timeout
        self.onTimeout = onTimeout
    }

    // `{attribute: {...}, timeout: 6h}`: the condition's key sits beside the wait's own keys.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        timeout = try c.decodeIfPresent(Span.self, forKey: .timeout)
        onTimeout = try c.decodeIfPresent(String.self, forKey: .onTimeout)
        condition = try Condition(from: FilteringDecoder(decoder, dropping: ["timeout", "onTimeout"]))
    }

    public func encode(to encoder: any Encoder) throws {
        try condition.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encodeIfPresent(timeout, forKey: .timeout)
        try c.encodeIfPresent(onTimeout, forKey: .onTimeout)
    }
}

/// `if` / `then` / `else` (an `elif` is an `if` inside `else`).
public struct IfAction: Hashable, Sendable, Codable {
    public var condition: Condition
    public var then: [Action]
    public var `else`: [Action]?
    public init(_ condition: Condition, then: [Action], else otherwise: [Action]? = nil) {
        self.condition = condition
        self.then = then
        self.else = otherwise
    }
}

extension KeyedDecodingContainer {
    /// A value that may be JSON null: absent → nil, `null` → `.null` (a target of "no value").
    func decodeNullable(_ key: Key) throws -> Value? {
        // Not `nil` in a ternary: Value is nil-literal expressible, so that `nil` would be `.null`.
        guard contains(key) else { return Optional<Value>.none }
        return try decode(Value.self, forKey: key)
    }
}

/// A decoder that hides some keys of a keyed container (so a condition's single key can be
/// decoded from an object that also holds the wait's own keys).
struct FilteringDecoder: Decoder {
    let base: any Decoder
    let dropping: Set<String>
    init(_ base: any Decoder, dropping: Set<String>) {
        self.base = base
        self.dropping = dropping
    }
    var codingPath: [any CodingKey] { base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Filtered<Key>(inner: try base.container(keyedBy: Key.self), dropping: dropping))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { try base.unkeyedContainer() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { try base.singleValueContainer() }

    struct Filtered<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let inner: KeyedDecodingContainer<Key>
        let dropping: Set<String>
        var codingPath: [any CodingKey] { inner.codingPath }
        var allKeys: [Key] { inner.allKeys.filter { !dropping.contains($0.stringValue) } }
        func contains(_ key: Key) -> Bool { !dropping.contains(key.stringValue) && inner.contains(key) }
        func decodeNil(forKey key: Key) throws -> Bool { try inner.decodeNil(forKey: key) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try inner.decode(type, forKey: key) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try inner.nestedContainer(keyedBy: type, forKey: key)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try inner.nestedUnkeyedContainer(forKey: key) }
        func superDecoder() throws -> any Decoder { try inner.superDecoder() }
        func superDecoder(forKey key: Key) throws -> any Decoder { try inner.superDecoder(forKey: key) }
    }
}
