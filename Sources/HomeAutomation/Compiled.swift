import Foundation
public import HomeModel

/// A problem the validator found, with where it is and what to do.
public struct AutomationIssue: Hashable, Sendable, Codable, CustomStringConvertible {
    public enum Severity: String, Hashable, Sendable, Codable { case error, warning }
    public var severity: Severity
    /// `unknownDevice`, `unknownAttribute`, `valueOutOfRange`… (docs/automations.md lists them).
    public var code: String
    /// Where in the automation: `starters[1].attribute.attribute`.
    public var path: String
    public var message: String
    /// The closest names, the range, the traits it has.
    public var suggestion: String?

    public init(_ severity: Severity = .error, _ code: String, _ path: String, _ message: String, suggestion: String? = nil) {
        self.severity = severity
        self.code = code
        self.path = path
        self.message = message
        self.suggestion = suggestion
    }

    public var description: String {
        "\(path): \(message)" + (suggestion.map { " (did you mean \($0)?)" } ?? "")
    }

    /// The codes that say a device is not in the home (now): a config entry with only these
    /// waits for it; a loaded automation with them is inert until it comes back.
    public static let missingDeviceCodes: Set<String> = ["unknownDevice", "notCommissioned", "deviceRemoved"]
}

/// A device's attribute, resolved to IDs.
public struct AttributeKey: Hashable, Sendable {
    public let device: DeviceID
    public let trait: TraitID
    public let attribute: AttributeID
}

/// When an attribute starter's state holds: edge-triggered on entering it.
enum Predicate: Hashable, Sendable {
    case changes
    case equals(to: Value?, from: Value?)
    /// Holds when the value is above `limit`; released once it falls to `limit - hysteresis`.
    case above(Double, hysteresis: Double)
    /// Holds when the value is below `limit`; released once it rises to `limit + hysteresis`.
    case below(Double, hysteresis: Double)
}

struct CompiledStarter: Sendable {
    let id: String
    let index: Int
    let kind: Kind
    enum Kind: Sendable {
        case attribute(AttributeKey, type: DeviceTypeID?, Predicate, hold: Span?)
        case event(device: DeviceID, trait: TraitID, event: EventID, fields: [String: Value])
        case connectivity(device: DeviceID, to: ConnectivityState, hold: Span?)
        case time(TimeStarter)
        case sun(SunStarter)
        case manual
        case startup(after: Span?)
    }

    /// A wall-clock starter planned as a durable `schedule` timer (time, sun).
    var isScheduled: Bool {
        switch kind {
        case .time, .sun: true
        default: false
        }
    }
}

indirect enum CompiledCondition: Sendable {
    case all([CompiledCondition])
    case any([CompiledCondition])
    case not(CompiledCondition)
    case attribute(AttributeKey, type: DeviceTypeID?, AttributeCondition, path: String)
    case time(TimeCondition, path: String)
    /// `isUp`, or a window between two sun instants (either may be open).
    case sun(after: SunInstant?, before: SunInstant?, isUp: Bool?)
    case starter(String)
    case scene(String)
    case connectivity(DeviceID, ConnectivityState)
}

/// A command step's own `timeout` and `continueOnError`.
struct StepOptions: Sendable, Hashable {
    var timeout: Span?
    var continueOnError = false
}

indirect enum CompiledAction: Sendable {
    case command(CommandRequest, StepOptions)
    case write(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value)
    case scene(String)
    case delay(Span)
    case waitFor(CompiledCondition, timeout: Span?, stopOnTimeout: Bool)
    case `if`(CompiledCondition, then: [CompiledAction], else: [CompiledAction])
    case parallel([CompiledAction])
    case stop(reason: String?, error: Bool)
    case run(String)
    case log(String)
    case notify(String)
    case publish(topic: String, payload: [UInt8], retain: Bool)
    case webhook(url: URL, body: Value?, timeout: Span)
}

/// An automation resolved against the home: what the engine runs.
struct CompiledAutomation: Sendable {
    let source: Automation
    let starters: [CompiledStarter]
    let conditions: CompiledCondition?
    let actions: [CompiledAction]
    var hasManualStarter: Bool { starters.contains { if case .manual = $0.kind { true } else { false } } }
}
