public import HomeModel
public import Foundation

/// One start of an automation, or one decision not to start it (a near-miss): the trace.
public struct RunTrace: Hashable, Sendable, Codable, Identifiable {
    public enum Outcome: String, Hashable, Sendable, Codable {
        case running, completed, failed, stopped
        /// A starter fired but the conditions did not hold.
        case conditionFailed
        /// Refused by the mode (single already running, queue full, parallel at maxRuns).
        case skipped
        /// Inside `suppressFor` of the previous start.
        case suppressed
        /// Changes the engine never saw (the tap overflowed): counted and traced.
        case dropped
        /// Cut short by a restart (a command in flight is never retried), or by `restart` mode.
        case interrupted
        /// A delay interrupted by a restart that `onRestart: abandon` dropped, or a missed schedule.
        case abandoned
        /// A dry run (``AutomationEngine/simulate(_:starter:as:)``).
        case simulated
    }

    public struct Cause: Hashable, Sendable, Codable {
        /// The starter's id (nil for a manual run through the API without a manual starter).
        public var starter: String?
        public var description: String
        public var old: Value?
        public var new: Value?
        /// The core version of the change that started it.
        public var version: UInt64?
    }

    public struct ConditionResult: Hashable, Sendable, Codable {
        public var path: String
        public var holds: Bool
        /// What it saw, e.g. `gpio:door BooleanState.StateValue = true`.
        public var saw: String
    }

    public struct Step: Hashable, Sendable, Codable {
        public var path: String
        /// `command`, `write`, `scene`, `delay`, `waitFor`, `if`, `parallel`, `stop`, `run`, `log`, `notify`.
        public var kind: String
        public var detail: String
        /// `ok`, `wouldSend`, or the error code (`deviceOffline`, `permissionDenied`, `timeout`…).
        public var result: String
        public var message: String?
        public var at: Date
        /// Time to the driver's answer (commands), or how long the step took.
        public var milliseconds: Double?
    }

    public var id: String
    public var automation: String
    public var revision: Int?
    public var started: Date
    public var finished: Date?
    public var cause: Cause
    public var outcome: Outcome
    public var reason: String?
    public var conditions: [ConditionResult] = []
    public var steps: [Step] = []
    /// From the change's acceptance by the core to the first command handed to the core's command path.
    public var latencyMicroseconds: Int?

    /// Whether it is a near-miss (it did not run).
    public var isNearMiss: Bool { [.conditionFailed, .skipped, .suppressed, .dropped].contains(outcome) }
}
