import Synchronization

/// Wakes the plugin's timer work (debounce windows, long presses, multi-press windows, PIR
/// hold-on, chip retries) at the earliest deadline on the injected clock.
///
/// One loop, owned by the plugin's `run`: it sleeps until the earliest deadline or until
/// ``poke()`` says the deadlines changed (an edge arrived), whichever comes first.
final class Scheduler<C: Clock>: Sendable where C.Duration == Duration {
    struct State {
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    let clock: C
    let state = Mutex(State())

    init(clock: C) { self.clock = clock }

    /// Tells the loop that deadlines may have changed.
    func poke() {
        let waiters = state.withLock { s in
            s.generation += 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume() }
    }

    /// Runs until cancelled: calls `fire(now)` whenever a deadline may have passed.
    func run(deadline: @Sendable () -> C.Instant?, fire: @Sendable (C.Instant) -> Void) async throws {
        while true {
            try Task.checkCancellation()
            let generation = state.withLock { $0.generation }
            fire(clock.now)
            guard let due = deadline() else {
                await waitForPoke(after: generation)
                continue
            }
            if due <= clock.now { continue }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.clock.sleep(until: due, tolerance: nil) }
                group.addTask { await self.waitForPoke(after: generation) }
                defer { group.cancelAll() }
                _ = try await group.next()
            }
        }
    }

    func waitForPoke(after generation: Int) async {
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.generation != generation || Task.isCancelled { return true }
                    s.waiters[id] = c
                    return false
                }
                if resumeNow { c.resume() }
            }
        } onCancel: {
            let c = state.withLock { $0.waiters.removeValue(forKey: id) }
            c?.resume()
        }
    }
}
