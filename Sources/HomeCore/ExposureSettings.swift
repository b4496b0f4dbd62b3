public import HomeModel
import Synchronization

/// Where the exposure policy an admin edited is kept (HomeStorage implements it on SQLite).
public protocol ExposureStore: Sendable {
    /// The policy saved by an admin, or nil when none was (hearth.yaml's then applies).
    func loadExposurePolicy() throws(HomeError) -> ExposurePolicy?
    /// Saves the policy (nil: forget it, so hearth.yaml's applies again).
    func saveExposurePolicy(_ policy: ExposurePolicy?, by: String) throws(HomeError)
}

/// The exposure policy in force, shared by every door, and who set it.
///
/// hearth.yaml's `exposure:` gives the base policy; an admin's edit through the API or CLI is
/// saved in the store and wins until it is reset. Doors read ``current`` and watch
/// ``updates()`` to re-export when it changes.
public final class ExposureSettings: Sendable {
    /// Where the policy in force comes from.
    public enum Source: String, Hashable, Sendable, Codable {
        /// hearth.yaml (or the built-in default when it says nothing).
        case configuration
        /// An admin's edit, saved in the database.
        case admin
    }

    struct State {
        var policy: ExposurePolicy
        var source: Source
        var watchers: [Int: AsyncStream<ExposurePolicy>.Continuation] = [:]
        var nextID = 0
    }

    let configured: ExposurePolicy
    let store: (any ExposureStore)?
    let state: Mutex<State>
    /// The doors switched on in hearth.yaml (`mqtt`, …), for the API to show.
    public let doors: [String]

    /// - Parameters:
    ///   - configured: hearth.yaml's policy (the default when it has none).
    ///   - store: where admin edits are saved; nil keeps them in memory only.
    ///   - doors: which doors are on.
    public init(configured: ExposurePolicy = .default, store: (any ExposureStore)?, doors: [String] = []) throws(HomeError) {
        self.configured = configured
        self.store = store
        self.doors = doors
        if let saved = try store?.loadExposurePolicy() {
            state = Mutex(State(policy: saved, source: .admin))
        } else {
            state = Mutex(State(policy: configured, source: .configuration))
        }
    }

    /// The policy in force.
    public var current: ExposurePolicy { state.withLock { $0.policy } }
    public var source: Source { state.withLock { $0.source } }

    /// Replaces the policy (admins only), saving it first; watchers get it after.
    public func update(_ policy: ExposurePolicy, by principal: Principal) throws(HomeError) {
        guard principal.role == .admin else {
            throw .permissionDenied("\(principal) is a \(principal.role.rawValue); only an admin can change what leaves the house")
        }
        try store?.saveExposurePolicy(policy, by: principal.id)
        publish(policy, source: .admin)
    }

    /// Forgets the admin's edit: hearth.yaml's policy applies again.
    public func reset(by principal: Principal) throws(HomeError) {
        guard principal.role == .admin else {
            throw .permissionDenied("\(principal) is a \(principal.role.rawValue); only an admin can change what leaves the house")
        }
        try store?.saveExposurePolicy(nil, by: principal.id)
        publish(configured, source: .configuration)
    }

    /// The policy now, then every new one.
    public func updates() -> AsyncStream<ExposurePolicy> {
        let (stream, continuation) = AsyncStream<ExposurePolicy>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.watchers[id] = continuation
            continuation.yield(s.policy)
            return id
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) } }
        return stream
    }

    func publish(_ policy: ExposurePolicy, source: Source) {
        let watchers = state.withLock { s in
            s.policy = policy
            s.source = source
            return Array(s.watchers.values)
        }
        for w in watchers { w.yield(policy) }
    }
}
