import Foundation
public import HearthAPI
public import HomeModel
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An automation written in Swift, shaped like the Google Home APIs' automation DSL: starters
/// (any of them starts it), optional conditions, then actions in order. It builds the JSON the
/// API takes (`docs/automations.md`); hearthd validates it.
///
/// ```swift
/// let draft = AutomationDraft(id: "hall-light", name: "Hall light", mode: .restart) {
///     AutomationStarter.event(device: "gpio:hall-button", trait: "Switch", event: "InitialPress", id: "press")
///     AutomationStarter.manual()
/// } conditions: {
///     AutomationCondition.any {
///         AutomationCondition.starter("press")
///         AutomationCondition.time(after: "18:00", before: "06:00")
///     }
/// } actions: {
///     AutomationAction.command(device: "gpio:hall-relay", type: "OnOffLight", trait: "OnOff", command: "On")
///     AutomationAction.delay(.seconds(300))
///     AutomationAction.command(device: "gpio:hall-relay", trait: "OnOff", command: "Off")
/// }
/// try await home.createAutomation(draft)   // throws AutomationRefused with every issue
/// ```
public struct AutomationDraft: Sendable, Hashable {
    public enum Mode: String, Sendable { case single, restart, queued, parallel }

    public var id: String
    public var name: String
    public var mode: Mode?
    public var enabled: Bool
    public var starters: [AutomationStarter]
    public var conditions: AutomationCondition?
    public var actions: [AutomationAction]

    public init(
        id: String, name: String, mode: Mode? = nil, enabled: Bool = true, @ListBuilder<AutomationStarter> starters: () -> [AutomationStarter],
        @ListBuilder<AutomationCondition> conditions: () -> [AutomationCondition] = { [] }, @ListBuilder<AutomationAction> actions: () -> [AutomationAction]
    ) {
        self.id = id
        self.name = name
        self.mode = mode
        self.enabled = enabled
        self.starters = starters()
        let c = conditions()
        self.conditions = c.isEmpty ? nil : c.count == 1 ? c[0] : .allOf(c)
        self.actions = actions()
    }

    /// The automation as the API's JSON body.
    public var json: Value {
        var o: [String: Value] = ["id": .string(id), "name": .string(name), "starters": .list(starters.map(\.json)), "actions": .list(actions.map(\.json))]
        if let mode { o["mode"] = .string(mode.rawValue) }
        if !enabled { o["enabled"] = false }
        if let conditions { o["conditions"] = conditions.json }
        return .object(o)
    }
}

/// A duration as the API writes it (`300s`).
func span(_ d: Duration) -> Value {
    let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    return ms % 1000 == 0 ? .string("\(ms / 1000)s") : .string("\(ms)ms")
}

/// What starts an automation.
public struct AutomationStarter: Sendable, Hashable {
    public let json: Value

    static func make(_ id: String?, _ key: String, _ body: [String: Value]) -> AutomationStarter {
        var o: [String: Value] = [key: .object(body)]
        if let id { o["id"] = .string(id) }
        return AutomationStarter(json: .object(o))
    }

    static func target(_ device: String, _ type: String?, _ trait: String) -> [String: Value] {
        var o: [String: Value] = ["device": .string(device), "trait": .string(trait)]
        if let type { o["type"] = .string(type) }
        return o
    }

    /// An attribute entering a state: `to` a value, `above`/`below` a threshold (with
    /// `hysteresis`), or any change; held `for` a while when given.
    public static func attribute(
        device: String, type: String? = nil, trait: String, attribute: String, to: Value? = nil, above: Double? = nil,
        below: Double? = nil, hysteresis: Double? = nil, for hold: Duration? = nil, id: String? = nil
    ) -> AutomationStarter {
        var o = target(device, type, trait)
        o["attribute"] = .string(attribute)
        if let to { o["to"] = to }
        if let above { o["above"] = .double(above) }
        if let below { o["below"] = .double(below) }
        if let hysteresis { o["hysteresis"] = .double(hysteresis) }
        if let hold { o["for"] = span(hold) }
        if to == nil, above == nil, below == nil { o["changes"] = true }
        return make(id, "attribute", o)
    }

    /// A device event (`Switch` `InitialPress`…), optionally only with some field values.
    public static func event(
        device: String, type: String? = nil, trait: String, event: String, where fields: [String: Value]? = nil, id: String? = nil
    ) -> AutomationStarter {
        var o = target(device, type, trait)
        o["event"] = .string(event)
        if let fields { o["where"] = .object(fields) }
        return make(id, "event", o)
    }

    /// A device going `offline` or `online` (held `for` a while when given).
    public static func connectivity(device: String, to: String, for hold: Duration? = nil, id: String? = nil) -> AutomationStarter {
        var o: [String: Value] = ["device": .string(device), "to": .string(to)]
        if let hold { o["for"] = span(hold) }
        return make(id, "connectivity", o)
    }

    /// A time of day (`"06:30"`), on some days (`["mon", "fri"]`) or every day.
    public static func time(at: String, days: [String]? = nil, id: String? = nil) -> AutomationStarter {
        var o: [String: Value] = ["at": .string(at)]
        if let days { o["days"] = .list(days.map(Value.string)) }
        return make(id, "time", o)
    }

    /// `sunrise`, `sunset`, `dawn`, `dusk` or `solarNoon`, moved by `offset` (negative: before).
    public static func sun(_ event: String, offset: Duration? = nil, id: String? = nil) -> AutomationStarter {
        var o: [String: Value] = ["event": .string(event)]
        if let offset { o["offset"] = offset < .zero ? .string("-" + (span(.zero - offset).stringValue ?? "0s")) : span(offset) }
        return make(id, "sun", o)
    }

    /// Run by hand (the API, the CLI, the web page).
    public static func manual(id: String? = nil) -> AutomationStarter { make(id, "manual", [:]) }
}

/// Only if: conditions over attributes, time, which starter fired.
public indirect enum AutomationCondition: Sendable, Hashable {
    case allOf([AutomationCondition])
    case anyOf([AutomationCondition])
    case not(AutomationCondition)
    case leaf(Value)

    /// Every one holds.
    public static func all(@ListBuilder<AutomationCondition> _ body: () -> [AutomationCondition]) -> AutomationCondition { .allOf(body()) }
    /// At least one holds.
    public static func any(@ListBuilder<AutomationCondition> _ body: () -> [AutomationCondition]) -> AutomationCondition { .anyOf(body()) }

    /// An attribute equal to a value, or above / below a threshold.
    public static func attribute(
        device: String, type: String? = nil, trait: String, attribute: String, equals: Value? = nil, above: Double? = nil, below: Double? = nil
    ) -> AutomationCondition {
        var o = AutomationStarter.target(device, type, trait)
        o["attribute"] = .string(attribute)
        if let equals { o["equals"] = equals }
        if let above { o["above"] = .double(above) }
        if let below { o["below"] = .double(below) }
        return .leaf(["attribute": .object(o)])
    }

    /// Local time between `after` and `before` (`"18:00"`; across midnight when after > before).
    public static func time(after: String? = nil, before: String? = nil) -> AutomationCondition {
        var o: [String: Value] = [:]
        if let after { o["after"] = .string(after) }
        if let before { o["before"] = .string(before) }
        return .leaf(["time": .object(o)])
    }

    /// The local time against the day's sun events (`"sunset-30m"`, `"sunrise+10m"`; across
    /// midnight when after comes later in the day than before). Needs the home's location.
    public static func sun(after: String? = nil, before: String? = nil) -> AutomationCondition {
        var o: [String: Value] = [:]
        if let after { o["after"] = .string(after) }
        if let before { o["before"] = .string(before) }
        return .leaf(["sun": .object(o)])
    }

    /// The sun is up (`true`) or down (`false`) now, computed from the home's location.
    public static func sunIsUp(_ up: Bool = true) -> AutomationCondition { .leaf(["sun": ["isUp": .bool(up)]]) }

    /// The run was started by the starter with this `id`.
    public static func starter(_ id: String) -> AutomationCondition { .leaf(["starter": .string(id)]) }

    /// A scene is active (every target at its value).
    public static func sceneActive(_ id: String) -> AutomationCondition { .leaf(["scene": .string(id)]) }

    public var json: Value {
        switch self {
        case .allOf(let l): ["all": .list(l.map(\.json))]
        case .anyOf(let l): ["any": .list(l.map(\.json))]
        case .not(let c): ["not": c.json]
        case .leaf(let v): v
        }
    }
}

/// What an automation does, in order.
public struct AutomationAction: Sendable, Hashable {
    public let json: Value

    /// A command through the normal command path (the same validation as `hearth command`).
    /// `timeout` bounds the wait for the device's answer (the step then fails as `timeout`);
    /// with `continueOnError` a failed step does not end the run.
    public static func command(
        device: String, type: String? = nil, trait: String, command: String, args: [String: Value] = [:], timeout: Duration? = nil,
        continueOnError: Bool = false
    ) -> AutomationAction {
        var o = AutomationStarter.target(device, type, trait)
        o["command"] = .string(command)
        if !args.isEmpty { o["args"] = .object(args) }
        if let timeout { o["timeout"] = span(timeout) }
        if continueOnError { o["continueOnError"] = .bool(true) }
        return AutomationAction(json: ["command": .object(o)])
    }

    /// Writes a writable attribute.
    public static func write(device: String, type: String? = nil, trait: String, attribute: String, value: Value) -> AutomationAction {
        var o = AutomationStarter.target(device, type, trait)
        o["attribute"] = .string(attribute)
        o["value"] = value
        return AutomationAction(json: ["write": .object(o)])
    }

    /// Recalls a scene.
    public static func scene(_ id: String) -> AutomationAction { AutomationAction(json: ["scene": .string(id)]) }

    /// Waits (0 s to 7 days; survives a restart of hearthd).
    public static func delay(_ d: Duration) -> AutomationAction { AutomationAction(json: ["delay": span(d)]) }

    /// These actions at once.
    public static func parallel(@ListBuilder<AutomationAction> _ body: () -> [AutomationAction]) -> AutomationAction { AutomationAction(json: ["parallel": .list(body().map(\.json))]) }

    /// A line on the events feed and the log.
    public static func log(_ line: String) -> AutomationAction { AutomationAction(json: ["log": .string(line)]) }
}

/// Collects the starters, conditions or actions of an ``AutomationDraft`` (with `if`, `else`
/// and `for` inside the braces).
@resultBuilder public enum ListBuilder<Element> {
    public static func buildExpression(_ e: Element) -> [Element] { [e] }
    public static func buildBlock(_ parts: [Element]...) -> [Element] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Element]?) -> [Element] { part ?? [] }
    public static func buildEither(first: [Element]) -> [Element] { first }
    public static func buildEither(second: [Element]) -> [Element] { second }
    public static func buildArray(_ parts: [[Element]]) -> [Element] { parts.flatMap { $0 } }
}

/// hearthd refused an automation: the error and every issue the compiler found (code, path,
/// message, suggestion) — never a saved-but-invalid automation.
public struct AutomationRefused: Error, Sendable, CustomStringConvertible {
    public let error: HomeError
    public let issues: [WireAutomationIssue]
    public var description: String {
        ([error.message] + issues.map { "\($0.severity.rawValue): \($0.path): \($0.message)" + ($0.suggestion.map { " (did you mean \($0)?)" } ?? "") })
            .joined(separator: "\n")
    }
}

extension Home {
    /// Saves a new automation (admins; `conflict` when its ID is taken). A refusal carries
    /// every issue ([AutomationRefused]).
    @discardableResult
    public func createAutomation(_ draft: AutomationDraft) async throws -> WireAutomation {
        try await automationRequest("POST", "automations", draft.json)
    }

    /// Every problem hearthd finds in a draft, saving nothing.
    public func validateAutomation(_ draft: AutomationDraft) async throws -> [WireAutomationIssue] {
        let r: WireAutomationIssues = try await automationRequest("POST", "automations/validate", draft.json)
        return r.issues
    }

    /// What a device can start, test and do in an automation (`GET /candidates?device=`).
    public func automationCandidates(device: DeviceID) async throws(HomeError) -> WireCandidates {
        try await connection.send("GET", "candidates?device=\(segment(device.rawValue))")
    }

    func automationRequest<T: Decodable>(_ method: String, _ path: String, _ body: Value) async throws -> T {
        let data = try HearthConnection.encoder.encode(body)
        var base = connection.baseURL.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + "/api/v1/" + path) else { throw HomeError.invalidArgument("bad request path '\(path)'") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = data
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token = connection.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (answer, response): (Data, URLResponse)
        do {
            (answer, response) = try await connection.session.data(for: request)
        } catch {
            throw HomeError(HearthConnection.unreachable, "cannot reach hearthd at \(connection.baseURL.absoluteString): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            if let refused = try? HearthConnection.decoder.decode(WireAutomationErrorBody.self, from: answer) {
                throw AutomationRefused(error: HomeError(refused.error.code.homeErrorCode, refused.error.message), issues: refused.error.issues)
            }
            if let body = try? HearthConnection.decoder.decode(WireErrorBody.self, from: answer) { throw body.error.homeError }
            throw HomeError.internal("hearthd answered \(method) \(path) with HTTP \(status)")
        }
        return try HearthConnection.decoder.decode(T.self, from: answer)
    }
}
