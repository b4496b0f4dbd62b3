import Dispatch
import DriverAPI
import Synchronization

/// Hands the attribute reports of MQTT messages read back to back to the host in one call,
/// instead of one call (one core update, one wake-up of every observer) per message.
///
/// The network thread adds each message's reports with `more`: whether the message came in a
/// read burst (``MQTTConnection`` reads every message waiting on the socket, then calls its
/// `caughtUp` handler, which calls ``endOfBurst()``). While a burst lasts, reports gather; the
/// batch is handed over when the burst ends, when it reaches `limit` reports, and before any
/// other effect (``flush()``: a new device, an event, a connectivity change keeps its order
/// with the reports around it). A message alone — the paced case — is handed over as soon as
/// the socket is empty, on the network thread.
///
/// A large batch (a flood: at least `queueAtLeast` reports) is handed over by a serial queue
/// of its own, so the network thread reads and parses the next burst while the core applies
/// this one — two threads on the way in, not one doing both. Batches keep their order (one
/// serial queue, and a batch behind queued ones joins them); at most ``maximumQueued`` wait,
/// beyond that the network thread waits (back-pressure, no unbounded buffer); ``flush()``
/// returns only once every batch gathered before it reached the host.
final class ReportBatcher: Sendable {
    let context: any DriverContext
    let limit: Int
    /// Batches this large go through the queue; nil: every batch on the caller's thread.
    let queueAtLeast: Int?
    /// Reports waiting, oldest first.
    let pending = Mutex<[AttributeReport]>([])
    /// Held while a batch is taken and handed over (or queued), so batches reach the host in
    /// the order they were gathered even when another thread's effect flushes while the
    /// network thread adds. The host's `report` never calls back into the plugin, so holding
    /// it across that call (or across waiting for the queue) cannot deadlock.
    let handing = Mutex(())
    let queue = DispatchQueue(label: "hearth.mqtt.reports")
    /// Batches on the queue not yet handed over.
    let queued = Atomic<Int>(0)
    static let maximumQueued = 4

    init(context: any DriverContext, limit: Int = 512, queueAtLeast: Int? = nil) {
        self.context = context
        self.limit = limit
        self.queueAtLeast = queueAtLeast
    }

    /// Adds one message's reports; hands the batch over unless `more` is coming (the caller
    /// then calls ``endOfBurst()`` when it is done) and the batch is below the limit. Without
    /// `more` (reports from anywhere but a read burst) it returns once they reached the host.
    func add(_ reports: [AttributeReport], more: Bool) {
        let full = pending.withLock { p -> Bool in
            p += reports
            return !more || p.count >= limit
        }
        if full { handOver(mayQueue: more) }
    }

    /// A read burst ended: hands over what it gathered (a large batch through the queue).
    func endOfBurst() { handOver(mayQueue: true) }

    /// Hands over whatever is waiting and returns once every report gathered so far reached
    /// the host (queued batches included); nothing waiting and nothing queued: no call.
    func flush() { handOver(mayQueue: false) }

    private func handOver(mayQueue: Bool) {
        handing.withLock { _ in
            let batch = pending.withLock { p -> [AttributeReport] in
                defer { p = [] }
                return p
            }
            // The end of a burst whose reports are all queued already: nothing to wait for
            // (only `flush` waits for the queue).
            if mayQueue && batch.isEmpty { return }
            let waiting = queued.load(ordering: .acquiring)
            if mayQueue, let queueAtLeast, batch.count >= queueAtLeast || waiting > 0, waiting < Self.maximumQueued {
                queued.add(1, ordering: .relaxed)
                queue.async { [self] in
                    context.report(batch)
                    queued.subtract(1, ordering: .releasing)
                }
                return
            }
            // On this thread, after what is queued.
            if waiting > 0 { queue.sync {} }
            if !batch.isEmpty { context.report(batch) }
        }
    }
}
