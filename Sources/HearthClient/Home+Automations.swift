public import HearthAPI
public import HomeModel

extension Home {
    /// Automation run traces as they happen, over the connection's one WebSocket: each run and
    /// near-miss of `automation` (nil: of every automation this session may read) whenever its
    /// trace is new or changes (start, each step, end). Never coalesced; the same reading rules
    /// as `GET /automations/ID/runs`. The sequence ends when the automation is deleted, when the
    /// server refuses the subscription (an automation this session may not read), or when the
    /// session is revoked (``RemoteUpdates/failure`` is then `permissionDenied`).
    public func automationRuns(of automation: String? = nil) -> RemoteUpdates<WireRunUpdate> {
        let messages = WebSocketFeed.messages(connection, subscribe: .subscribe(id: "runs", .automationRuns(automation: automation)), buffer: 4096)
        return RemoteUpdates(AsyncStream { continuation in
            let task = Task {
                for await m in messages {
                    guard case .run(_, let run, let missed) = m else { break }
                    continuation.yield(WireRunUpdate(run: run, missed: missed))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }, ending: ending)
    }
}

extension Home {
    /// Every scene this session can see (`GET /scenes`), with whether each is active now.
    public func scenes() async throws(HomeError) -> [WireScene] {
        try await connection.send("GET", "scenes")
    }

    /// Stores the devices' current values in a scene's targets (admins; `POST /scenes/ID/capture`,
    /// Matter's StoreScene): the same devices and attributes, the revision one up.
    @discardableResult
    public func captureScene(_ id: String) async throws(HomeError) -> WireScene {
        try await connection.send("POST", "scenes/\(segment(id))/capture")
    }

    /// Recalls a scene (members too): each target through the normal command path.
    public func recallScene(_ id: String) async throws(HomeError) {
        try await connection.send("POST", "scenes/\(segment(id))/recall")
    }
}
