public import Foundation
public import HomeModel

/// The automations the API reads, edits and runs, behind a protocol the core owns (as
/// ``LayoutStore`` and ``AccessControl`` are): HomeAutomation's engine implements it, hearthd
/// hands it to the server, and the server knows nothing of the engine.
///
/// The core does not know the automation IR: definitions travel as the engine's JSON
/// (`docs/automations.md`), read and written by the implementation, and so do run traces.
/// Every call checks `principal` (its session, and what its role may do). The engine's refusals
/// are thrown as ``AutomationRefusal`` (the API answers them with the compiler's problems, an
/// empty list when there are none); a body that is not a definition, and an ID already taken,
/// as a plain ``HomeError``.
public protocol AutomationControl: Sendable {
    /// Every automation `principal` may read, by ID.
    func automations(as principal: Principal) async throws -> [AutomationEntry]
    /// One automation, or `notFound`.
    func automation(_ id: String, as principal: Principal) async throws -> AutomationEntry
    /// What the compiler says of a definition (JSON), without saving it.
    func problems(in definition: Data) async throws -> [AutomationProblem]
    /// Saves a new automation (JSON); `conflict` when its ID is taken.
    func create(_ definition: Data, as principal: Principal) async throws -> AutomationEntry
    /// Replaces automation `id` with a definition (JSON; its own `id` is ignored), if it is at
    /// `revision` when one is given (else `conflict`).
    func replace(_ id: String, with definition: Data, ifRevision revision: Int?, as principal: Principal) async throws
        -> AutomationEntry
    func deleteAutomation(_ id: String, ifRevision revision: Int?, as principal: Principal) async throws
    func setAutomation(_ id: String, enabled: Bool, as principal: Principal) async throws -> AutomationEntry
    /// Starts a run now; returns its ID.
    func startRun(_ id: String, as principal: Principal) async throws -> String
    /// A dry run of the saved automation from `starter` (or its first); the trace (JSON).
    func dryRun(_ id: String, starter: String?, as principal: Principal) async throws -> Data
    /// A dry run of a draft not saved (JSON, as `create` takes it) from `starter` (or its
    /// first); the trace (JSON), touching no device. A draft that does not validate is refused
    /// with its problems.
    func dryRun(draft definition: Data, starter: String?, as principal: Principal) async throws -> Data
    /// The automation's recent runs and near-misses, newest first (a JSON array of traces).
    func runTraces(of id: String, as principal: Principal) async throws -> Data
    /// One run's trace (JSON).
    func runTrace(_ runID: String, as principal: Principal) async throws -> Data
    /// Every run and near-miss of automation `id` (nil: of every automation `principal` may
    /// read) from now on, each time its trace is new or changes (start, each step, end), never
    /// coalesced; the same reading rules as ``runTraces(of:as:)``. A consumer that falls
    /// behind the stream's bounded buffer loses the oldest updates, counted in the next
    /// one's ``AutomationRunUpdate/missed``. The stream finishes when the automation is deleted
    /// or the engine stops.
    func runUpdates(of id: String?, as principal: Principal) async throws -> AsyncStream<AutomationRunUpdate>
    /// Re-reads the configuration file's `scenes:` and `automations:` (admins; as SIGHUP does)
    /// and says what happened: what was loaded, what was refused (file, line, key), what waits
    /// for devices. `notFound` when this engine was not started from a configuration file.
    func reloadConfiguration(as principal: Principal) async throws -> ConfigReloadReport
    /// What `device` can start, test and do in an automation as `principal` may use it (JSON:
    /// `{device, name, starters, conditions, actions}`); `notFound` for a device it cannot see.
    func candidates(for device: String, as principal: Principal) async throws -> Data
    /// An app's grant was revoked: its automations are suspended and their runs end.
    func grantRevoked(_ grantID: String) async
}

/// What a configuration reload did (``AutomationControl/reloadConfiguration(as:)``).
public struct ConfigReloadReport: Hashable, Sendable {
    /// True when the new set replaced the running one (then ``refused`` lists only entries that
    /// failed while loading); false when a problem kept the running set whole.
    public var applied: Bool
    public var scenes: Int
    public var automations: Int
    public var refused: [ConfigProblem]
    public var warnings: [ConfigProblem]
    /// Automations waiting for devices no plugin has reported yet.
    public var pending: [ConfigProblem]

    public init(applied: Bool, scenes: Int, automations: Int, refused: [ConfigProblem], warnings: [ConfigProblem], pending: [ConfigProblem]) {
        self.applied = applied
        self.scenes = scenes
        self.automations = automations
        self.refused = refused
        self.warnings = warnings
        self.pending = pending
    }
}

/// One problem in a configuration file: `etc/hearth.yaml:31: automations[1].starters[0].event.device: no device 'gpio:buton'`.
public struct ConfigProblem: Hashable, Sendable {
    public var file: String?
    public var line: Int?
    /// The key path (`automations[1].starters[0].event.device`), when the problem names one.
    public var key: String?
    public var message: String
    /// The whole line, as hearthd logs it.
    public var text: String

    public init(file: String?, line: Int?, key: String?, message: String, text: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
        self.text = text
    }

    /// Reads `FILE[:LINE]: KEY: MESSAGE` (the form every configuration problem is written
    /// in); a line in another form is all message.
    public init(parsing text: String) {
        self.init(file: nil, line: nil, key: nil, message: text, text: text)
        guard let first = text.range(of: ": ") else { return }
        let location = text[..<first.lowerBound]
        let rest = text[first.upperBound...]
        guard !location.contains(" ") else { return }
        if let colon = location.lastIndex(of: ":"), let n = Int(location[location.index(after: colon)...]) {
            file = String(location[..<colon])
            line = n
        } else {
            file = String(location)
        }
        if let second = rest.range(of: ": "), !rest[..<second.lowerBound].contains(" ") {
            key = String(rest[..<second.lowerBound])
            message = String(rest[second.upperBound...])
        } else {
            message = String(rest)
        }
    }
}

/// One new or changed run trace from ``AutomationControl/runUpdates(of:as:)``.
public struct AutomationRunUpdate: Sendable, Hashable {
    /// The trace (the engine's JSON, as ``AutomationControl/runTrace(_:as:)`` gives it).
    public var trace: Data
    /// Updates this subscriber lost before this one because it read too slowly.
    public var missed: Int

    public init(trace: Data, missed: Int = 0) {
        self.trace = trace
        self.missed = missed
    }
}

/// An automation as ``AutomationControl`` gives it: the definition (the engine's JSON) and its life.
public struct AutomationEntry: Hashable, Sendable {
    public var definition: Data
    /// `enabled`, `disabled`, `draft` or `suspended`.
    public var state: String
    public var suspendedReason: String?
    public var revision: Int
    public var executionCount: Int
    /// `api` or `config`.
    public var source: String
    public var configRef: String?
    /// Warnings from the last validation.
    public var problems: [AutomationProblem]
    /// `home`, or `app:<grant ID>` for an automation an app made.
    public var owner: String

    public init(
        definition: Data, state: String, suspendedReason: String?, revision: Int, executionCount: Int, source: String, configRef: String?,
        problems: [AutomationProblem], owner: String = "home"
    ) {
        self.owner = owner
        self.definition = definition
        self.state = state
        self.suspendedReason = suspendedReason
        self.revision = revision
        self.executionCount = executionCount
        self.source = source
        self.configRef = configRef
        self.problems = problems
    }
}

/// One problem the automation compiler found, with where it is and what might be meant.
public struct AutomationProblem: Hashable, Sendable {
    public var isError: Bool
    /// `unknownDevice`, `unknownAttribute`, `valueOutOfRange`… (`docs/automations.md`).
    public var code: String
    /// `starters[1].attribute.attribute`.
    public var path: String
    public var message: String
    public var suggestion: String?

    public init(isError: Bool, code: String, path: String, message: String, suggestion: String?) {
        self.isError = isError
        self.code = code
        self.path = path
        self.message = message
        self.suggestion = suggestion
    }
}

/// Why ``AutomationControl`` refused: the error, and the compiler's problems behind it (if any).
public struct AutomationRefusal: Error, Sendable {
    public var error: HomeError
    public var problems: [AutomationProblem]

    public init(_ error: HomeError, problems: [AutomationProblem] = []) {
        self.error = error
        self.problems = problems
    }
}

extension DecodingError {
    /// Where in the document (`.starters[0]`) and what went wrong, for an `invalidArgument`.
    public var pathAndMessage: (path: String, message: String) {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { k in k.intValue.map { "[\($0)]" } ?? ".\(k.stringValue)" }.joined()
        }
        switch self {
        case .keyNotFound(let key, let c): return (path(c.codingPath), "missing key '\(key.stringValue)'")
        case .typeMismatch(let t, let c): return (path(c.codingPath), "expected \(t)")
        case .valueNotFound(let t, let c): return (path(c.codingPath), "missing \(t)")
        case .dataCorrupted(let c): return (path(c.codingPath), c.debugDescription)
        @unknown default: return ("", "\(self)")
        }
    }

    /// This error as the API reports a bad body: `invalidArgument` naming the key path.
    public var invalidArgument: HomeError {
        let (path, message) = pathAndMessage
        return .invalidArgument(path.isEmpty ? message : "\(path.dropFirst()): \(message)")
    }
}
