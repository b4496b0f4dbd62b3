public import HomeModel

/// Where an automation is in its life (`GET /automations`' `state`).
public enum WireAutomationState: String, WireEnum {
    case enabled, disabled, draft, suspended
    public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
}

/// One problem the automation compiler found: `{severity, code, path, message, suggestion?}`.
public struct WireAutomationIssue: Codable, Sendable, Hashable {
    public enum Severity: String, WireEnum {
        case error, warning
        public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
    }
    public var severity: Severity
    /// `unknownDevice`, `unknownAttribute`, `valueOutOfRange`… (`docs/automations.md`).
    public var code: String
    /// Where in the automation: `starters[1].attribute.attribute`.
    public var path: String
    public var message: String
    /// The closest names, the range, the traits it has.
    public var suggestion: String?

    public init(severity: Severity, code: String, path: String, message: String, suggestion: String? = nil) {
        self.severity = severity
        self.code = code
        self.path = path
        self.message = message
        self.suggestion = suggestion
    }
}

/// An automation on the wire (`GET /automations/ID`): the definition as the engine writes it
/// (`docs/automations.md`; the engine owns its shape, so it travels as a JSON ``Value``), and
/// its life.
public struct WireAutomation: Codable, Sendable, Hashable {
    /// The definition (`docs/automations.md`).
    public var automation: Value
    public var state: WireAutomationState
    public var suspendedReason: String?
    public var revision: Int
    public var executionCount: Int
    /// `api` or `config`.
    public var source: String
    /// Where a `config` automation is defined (`hearth.yaml:12`).
    public var configRef: String?
    /// Warnings from the last validation.
    public var issues: [WireAutomationIssue]
    /// `home`, or `app:<grant ID>` for an automation an app made under its grant.
    public var owner: String?

    public init(
        automation: Value, state: WireAutomationState, suspendedReason: String?, revision: Int, executionCount: Int, source: String,
        configRef: String?, issues: [WireAutomationIssue], owner: String? = nil
    ) {
        self.owner = owner
        self.automation = automation
        self.state = state
        self.suspendedReason = suspendedReason
        self.revision = revision
        self.executionCount = executionCount
        self.source = source
        self.configRef = configRef
        self.issues = issues
    }
}

/// `POST /automations/validate`'s answer: `{"issues": [...]}`.
public struct WireAutomationIssues: Codable, Sendable, Hashable {
    public var issues: [WireAutomationIssue]
    public init(issues: [WireAutomationIssue]) { self.issues = issues }
}

/// An automation refused with the compiler's issues: `{"error": {code, message, issues}}`.
public struct WireAutomationErrorBody: Codable, Sendable, Hashable {
    public struct Inner: Codable, Sendable, Hashable {
        public var code: WireErrorCode
        public var message: String
        public var issues: [WireAutomationIssue]
        public init(code: WireErrorCode, message: String, issues: [WireAutomationIssue]) {
            self.code = code
            self.message = message
            self.issues = issues
        }
    }
    public var error: Inner
    public init(error: Inner) { self.error = error }
}

/// `POST /automations/ID/run`'s answer: `{"run": "<run id>"}`.
public struct WireRunStarted: Codable, Sendable, Hashable {
    public var run: String
    public init(run: String) { self.run = run }
}

/// One message of a WebSocket `automationRuns` subscription: a new or changed run trace (the
/// engine's JSON, as `GET /runs/ID` gives it) and how many updates were lost before it
/// because the client read too slowly.
public struct WireRunUpdate: Codable, Sendable, Hashable {
    public var run: Value
    public var missed: Int
    public init(run: Value, missed: Int) {
        self.run = run
        self.missed = missed
    }

    /// The run's ID (`run-1764139200-7`).
    public var id: String? { run["id"]?.stringValue }
    /// The automation's ID.
    public var automation: String? { run["automation"]?.stringValue }
    /// `running`, `completed`, `failed`, `conditionFailed`, `skipped`, `suppressed`…
    public var outcome: String? { run["outcome"]?.stringValue }
}

/// `POST /automations/reload`'s answer: what re-reading hearth.yaml's `scenes:` and
/// `automations:` did. `applied` false: a problem kept the running set whole (`refused` says
/// which); true: the new set runs (`refused` then lists only entries that failed to load).
public struct WireReloadOutcome: Codable, Sendable, Hashable {
    /// One problem: `{file, line, key, message, text}` (`text` is the line as hearthd logs it).
    public struct Problem: Codable, Sendable, Hashable {
        public var file: String?
        public var line: Int?
        public var key: String?
        public var message: String
        public var text: String
        public init(file: String?, line: Int?, key: String?, message: String, text: String) {
            self.file = file
            self.line = line
            self.key = key
            self.message = message
            self.text = text
        }
    }
    public var applied: Bool
    public var scenes: Int
    public var automations: Int
    public var refused: [Problem]
    public var warnings: [Problem]
    /// Automations waiting for devices no plugin has reported yet (loaded once they appear).
    public var pending: [Problem]

    public init(applied: Bool, scenes: Int, automations: Int, refused: [Problem], warnings: [Problem], pending: [Problem]) {
        self.applied = applied
        self.scenes = scenes
        self.automations = automations
        self.refused = refused
        self.warnings = warnings
        self.pending = pending
    }
}

/// `GET /candidates?device=ID`: what a device can start (`starters`), test (`conditions`) and
/// do (`actions`) in an automation, for the session asking (an app: only the device types and
/// traits its grant lets it automate; actions only when it may control).
public struct WireCandidates: Codable, Sendable, Hashable {
    public struct Element: Codable, Sendable, Hashable {
        /// `attribute`, `event`, `connectivity`; `command`, `write`.
        public var kind: String
        /// Device type and trait by name, as the automation JSON takes them.
        public var type: String?
        public var trait: String?
        /// The attribute, event or command.
        public var name: String?
        /// A command's arguments or an event's fields.
        public var fields: [String]?
        public var minimum: Int64?
        public var maximum: Int64?
        public var unit: String?
    }
    public var device: String
    public var name: String
    public var starters: [Element]
    public var conditions: [Element]
    public var actions: [Element]
}
