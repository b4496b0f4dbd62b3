public import MatterSecurity
import Synchronization

/// The thin owner of a ``CommissioningState``: runs each command under a lock, saves the
/// persistent part to the ``MatterStore`` when it changed (in the same lock, so saves keep
/// the order of commands), and hands back the events for the caller to act on after the lock.
///
/// If the save fails the state is put back as it was and the command fails with FAILURE, so
/// memory never runs ahead of disk.
///
/// ```swift
/// let node = try CommissioningNode(store: db.matterStore(), attestation: credentials)
/// let (response, events) = try node.run { state throws(CommissioningError) in
///     state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: session, now: .now)
/// }
/// ```
public final class CommissioningNode: Sendable {
    let store: any MatterStore
    let state: Mutex<CommissioningState>

    /// Loads the store; a fail-safe left armed by a restart is rolled back and saved.
    public init(store: any MatterStore, configuration: CommissioningState.Configuration = .init(),
                attestation: DeviceAttestationCredentials) throws(MatterStoreError) {
        let persisted = try store.loadCommissioning()
        var initial = CommissioningState(configuration: configuration, attestation: attestation, persisted: persisted)
        _ = initial.takeEvents()
        if initial.persistent != persisted { try store.saveCommissioning(initial.persistent) }
        self.store = store
        state = Mutex(initial)
    }

    /// Runs `body` on the state, persists, returns its result and the events.
    public func run<T: Sendable>(_ body: (inout CommissioningState) throws(CommissioningError) -> T)
        throws(CommissioningError) -> (result: T, events: [CommissioningEvent])
    {
        let store = self.store
        return try state.withLock { (state: inout CommissioningState) throws(CommissioningError) -> (result: T, events: [CommissioningEvent]) in
            let before = state
            let outcome: Result<T, CommissioningError>
            do throws(CommissioningError) { outcome = .success(try body(&state)) } catch { outcome = .failure(error) }
            // A refused command may still have changed state (RevokeCommissioning expires the
            // fail-safe before answering WindowNotOpen): save either way.
            let events = state.takeEvents()
            let after = state.persistent
            if after != before.persistent {
                do {
                    try store.saveCommissioning(after)
                } catch {
                    state = before
                    throw CommissioningError(.failure, "the commissioning state could not be saved: \(error)")
                }
            }
            let result = try outcome.get()
            return (result, events)
        }
    }

    /// A copy of the state, for reads of the clusters' attributes.
    public var snapshot: CommissioningState { state.withLock { $0 } }
}
