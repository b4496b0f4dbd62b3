public import HomeModel
public import Foundation

/// An automation as storage keeps it: the definition as JSON (the engine's graph, versioned by
/// the engine), with the columns the engine and the API filter on.
public struct StoredAutomation: Hashable, Sendable {
    public var id: String
    public var name: String
    /// `enabled`, `disabled`, `draft` or `suspended`.
    public var state: String
    public var suspendedReason: String?
    public var graphJSON: String
    public var graphVersion: Int
    public var executionCount: Int
    /// `home` or `app:<grant id>`.
    public var owner: String
    /// `api` or `config`.
    public var source: String
    public var configRef: String?
    public var revision: Int

    public init(
        id: String, name: String, state: String, suspendedReason: String? = nil, graphJSON: String, graphVersion: Int = 1,
        executionCount: Int = 0, owner: String = "home", source: String = "api", configRef: String? = nil, revision: Int
    ) {
        self.id = id
        self.name = name
        self.state = state
        self.suspendedReason = suspendedReason
        self.graphJSON = graphJSON
        self.graphVersion = graphVersion
        self.executionCount = executionCount
        self.owner = owner
        self.source = source
        self.configRef = configRef
        self.revision = revision
    }
}

/// A durable timer: a delay, a `for` hold or a schedule, with its absolute due time, so it
/// survives a restart (`kill -9` included).
public struct StoredTimer: Hashable, Sendable {
    public var id: String
    public var automationID: String
    /// `delay`, `wait`, `hold`, `schedule`, `startup`.
    public var kind: String
    /// Wall-clock due time.
    public var dueAt: Date
    /// What the engine needs to resume (JSON): the run, its position, its cause.
    public var payloadJSON: String

    public init(id: String, automationID: String, kind: String, dueAt: Date, payloadJSON: String) {
        self.id = id
        self.automationID = automationID
        self.kind = kind
        self.dueAt = dueAt
        self.payloadJSON = payloadJSON
    }
}

/// Where automations and their timers are kept (storage implements it, like ``LayoutStore``).
public protocol AutomationStore: Sendable {
    func loadAutomations() throws(HomeError) -> [StoredAutomation]
    func saveAutomation(_ automation: StoredAutomation) throws(HomeError)
    func deleteAutomation(id: String) throws(HomeError)
    func loadTimers() throws(HomeError) -> [StoredTimer]
    func saveTimer(_ timer: StoredTimer) throws(HomeError)
    func deleteTimer(id: String) throws(HomeError)
}
