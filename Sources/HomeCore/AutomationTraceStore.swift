public import HomeModel
public import Foundation

/// A run trace as storage keeps it: the engine's trace as JSON, with the columns storage
/// orders and prunes on.
public struct StoredTrace: Hashable, Sendable {
    public var id: String
    public var automationID: String
    public var startedAt: Date
    /// The run's outcome (`completed`, `conditionFailed`, `running`…).
    public var outcome: String
    public var traceJSON: String

    public init(id: String, automationID: String, startedAt: Date, outcome: String, traceJSON: String) {
        self.id = id
        self.automationID = automationID
        self.startedAt = startedAt
        self.outcome = outcome
        self.traceJSON = traceJSON
    }
}

/// Where run traces outlive the process (storage implements it beside ``AutomationStore``).
/// The engine writes traces in batches (group commit), so a busy button does not cost one
/// transaction per press.
public protocol AutomationTraceStore: Sendable {
    /// Inserts or replaces the traces in one transaction, then keeps only the newest `keep`
    /// of each automation they belong to (the oldest are dropped).
    func saveTraces(_ traces: [StoredTrace], keep: Int) throws(HomeError)
    /// Every kept trace, oldest first.
    func loadTraces() throws(HomeError) -> [StoredTrace]
}
