public import HomeCore
import HomeModel
import Foundation

/// Live traces (``liveRuns(of:as:)``, the WebSocket `automationRuns` subscription): every new or changed trace goes
/// to each subscriber allowed to read its automation, in the order the engine made them.
extension AutomationEngine {
    /// One subscriber: which automation (nil: all it may read), who asks, where updates go.
    struct RunSubscriber {
        let automation: String?
        let principal: Principal
        let continuation: AsyncStream<AutomationRunUpdate>.Continuation
        /// Updates the buffer refused since the last one delivered.
        var missed = 0
    }

    /// How many updates a subscriber's buffer holds before the newest are refused (counted).
    static let runUpdateBuffer = 512

    /// A stream of the traces of `id` (nil: every automation `principal` may read) from now on.
    /// Refused as ``runs(_:as:)`` is (`notFound` for an automation the principal may not read).
    public func liveRuns(of id: String?, as principal: Principal) throws(AutomationError) -> AsyncStream<AutomationRunUpdate> {
        if let id {
            _ = try record(id, as: principal)
        } else {
            do { try core.checkSessionPublic(principal) } catch { throw AutomationError(error) }
        }
        let (stream, continuation) = AsyncStream<AutomationRunUpdate>.makeStream(bufferingPolicy: .bufferingOldest(Self.runUpdateBuffer))
        let key = UUID()
        runSubscribers[key] = RunSubscriber(automation: id, principal: principal, continuation: continuation)
        continuation.onTermination = { _ in Task { await self.dropRunSubscriber(key) } }
        if stopping { continuation.finish() }
        return stream
    }

    func dropRunSubscriber(_ key: UUID) { runSubscribers[key] = nil }

    /// Sends a new or changed trace to the subscribers that may read it (simulations are not runs).
    func publishRun(_ trace: RunTrace) {
        guard !runSubscribers.isEmpty, !trace.automation.hasPrefix("\u{0}"), let record = records[trace.automation] else { return }
        var data: Data?
        var sessions: [Principal: Bool] = [:]
        for (key, var s) in runSubscribers where s.automation == nil || s.automation == trace.automation {
            let may: Bool
            if let known = sessions[s.principal] {
                may = known
            } else {
                may = mayRead(record, as: s.principal)
                sessions[s.principal] = may
            }
            guard may else { continue }
            if data == nil { data = try? Self.wireEncoder.encode(trace) }
            guard let data else { return }
            switch s.continuation.yield(AutomationRunUpdate(trace: data, missed: s.missed)) {
            case .enqueued: s.missed = 0
            case .dropped: s.missed += 1
            case .terminated: break
            @unknown default: break
            }
            runSubscribers[key] = s
        }
    }

    /// Ends the subscriptions to automation `id` alone (it was deleted).
    func endRunSubscriptions(of id: String) {
        for (key, s) in runSubscribers where s.automation == id {
            s.continuation.finish()
            runSubscribers[key] = nil
        }
    }

    /// Ends every subscription (the engine stops).
    func endAllRunSubscriptions() {
        for s in runSubscribers.values { s.continuation.finish() }
        runSubscribers = [:]
    }
}
