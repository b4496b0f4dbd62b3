import HomeCore
import HomeModel
import Foundation
import Logging

/// Run traces outlive the process: finished runs and near-misses are written in batches
/// (group commit, at most one transaction a second), the newest ``traceLimit`` per automation
/// kept; at shutdown everything pending is written, running runs included. A run that was
/// going when the process ended (or was killed) reads back as `interrupted`.
extension AutomationEngine {
    /// How long a finished trace may wait before it is written with others.
    static let traceCommitInterval: Duration = .seconds(1)

    var traceStore: (any AutomationTraceStore)? { store as? any AutomationTraceStore }

    /// Notes a new or changed trace: written with the next batch once it has finished.
    func keep(_ trace: RunTrace) {
        guard traceStore != nil, !trace.automation.hasPrefix("\u{0}"), trace.outcome != .running else { return }
        if pendingTraces[trace.id] == nil { pendingOrder.append(trace.id) }
        pendingTraces[trace.id] = trace
        guard traceCommit == nil, !stopping else { return }
        traceCommit = Task {
            try? await Task.sleep(for: Self.traceCommitInterval)
            self.flushTraces()
        }
    }

    /// Writes every pending trace now (tests, shutdown); the batch timer calls it too.
    public func flushTraces() {
        traceCommit?.cancel()
        traceCommit = nil
        guard let traceStore, !pendingTraces.isEmpty else { return }
        // In the order they were kept: storage breaks ties of equal start times by insertion.
        let batch = pendingOrder.compactMap { pendingTraces[$0] }
        pendingTraces = [:]
        pendingOrder = []
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let rows = batch.compactMap { t -> StoredTrace? in
            guard let data = try? encoder.encode(t) else { return nil }
            return StoredTrace(id: t.id, automationID: t.automation, startedAt: t.started, outcome: t.outcome.rawValue, traceJSON: String(decoding: data, as: UTF8.self))
        }
        do {
            try traceStore.saveTraces(rows, keep: Self.traceLimit)
        } catch {
            logger.error("\(rows.count) run trace(s) could not be saved: \(error.message)")
        }
    }

    /// At shutdown: the runs still going are written as they are (they read back as interrupted).
    func flushAllTraces() {
        for list in traces.values {
            for t in list where t.outcome == .running {
                if pendingTraces[t.id] == nil { pendingOrder.append(t.id) }
                pendingTraces[t.id] = t
            }
        }
        flushTraces()
    }

    /// Reads the kept traces back (at start): a run that was going reads back as `interrupted`.
    func loadTraces() {
        guard let traceStore else { return }
        let rows: [StoredTrace]
        do { rows = try traceStore.loadTraces() } catch {
            logger.error("run traces could not be read: \(error.message)")
            return
        }
        let decoder = JSONDecoder()
        var highest = nextRun
        for row in rows {
            guard var t = try? decoder.decode(RunTrace.self, from: Data(row.traceJSON.utf8)) else { continue }
            if t.outcome == .running {
                t.outcome = .interrupted
                t.reason = t.reason ?? "hearthd stopped during the run"
                pendingOrder.append(t.id)
                pendingTraces[t.id] = t
            }
            var list = traces[t.automation] ?? []
            list.append(t)
            if list.count > Self.traceLimit { list.removeFirst(list.count - Self.traceLimit) }
            traces[t.automation] = list
            if let n = t.id.split(separator: "-").last.flatMap({ Int($0) }) { highest = max(highest, n) }
        }
        // Run IDs stay unique across restarts within one second.
        nextRun = highest
        flushTraces()
    }
}
