import DriverAPI
import Synchronization

/// Hands the attribute reports of MQTT messages read back to back to the host in one call,
/// instead of one call (one core update, one wake-up of every observer) per message.
///
/// The network thread adds each message's reports with `more`: whether the message came in a
/// read burst (``MQTTConnection`` reads every message waiting on the socket, then calls its
/// `caughtUp` handler, which calls ``flush()``). While a burst lasts, reports gather; the batch
/// is handed over when the burst ends, when it reaches `limit` reports, and before any other
/// effect (a new device, an event, a connectivity change keeps its order with the reports
/// around it). A message alone — the paced case — is handed over as soon as the socket is empty.
final class ReportBatcher: Sendable {
    let context: any DriverContext
    let limit: Int
    /// Reports waiting, oldest first.
    let pending = Mutex<[AttributeReport]>([])
    /// Held while a batch is taken and handed over, so batches reach the host in the order
    /// they were gathered even when another thread's effect flushes while the network thread
    /// adds. The host's `report` never calls back into the plugin, so holding it across that
    /// call cannot deadlock.
    let handing = Mutex(())

    init(context: any DriverContext, limit: Int = 512) {
        self.context = context
        self.limit = limit
    }

    /// Adds one message's reports; hands the batch over unless `more` is coming (the caller
    /// then calls ``flush()`` when it is done) and the batch is below the limit.
    func add(_ reports: [AttributeReport], more: Bool) {
        let full = pending.withLock { p -> Bool in
            p += reports
            return !more || p.count >= limit
        }
        if full { flush() }
    }

    /// Hands over whatever is waiting (nothing: no call).
    func flush() {
        handing.withLock { _ in
            let batch = pending.withLock { p -> [AttributeReport] in
                defer { p = [] }
                return p
            }
            if !batch.isEmpty { context.report(batch) }
        }
    }
}
