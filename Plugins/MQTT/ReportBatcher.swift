import Dispatch
import DriverAPI
import Synchronization

/// Hands the attribute reports of MQTT messages read back to back to the host in one call,
/// instead of one call (one core update, one wake-up of every observer) per message.
///
/// The network thread adds each message's reports with `more`: whether more input is already
/// waiting on the socket. While it is, reports gather; the batch is handed over when the socket
/// has nothing more, when it reaches `limit` reports, before any other effect (a new device,
/// an event, a connectivity change keeps its order with the reports around it), and at the
/// latest `delay` after it started (the socket may hold bytes of something other than a
/// message, such as a ping answer). A message alone — the paced case — is handed over at once.
final class ReportBatcher: Sendable {
    let context: any DriverContext
    let limit: Int
    let delay: DispatchTimeInterval
    /// Reports waiting, oldest first, and whether a late hand-over is scheduled.
    let pending = Mutex<(reports: [AttributeReport], scheduled: Bool)>(([], false))
    /// Held while a batch is taken and handed over, so batches reach the host in the order
    /// they were gathered even when the late hand-over races the network thread. The host's
    /// `report` never calls back into the plugin, so holding it across that call cannot deadlock.
    let handing = Mutex(())

    init(context: any DriverContext, limit: Int = 512, delay: DispatchTimeInterval = .milliseconds(2)) {
        self.context = context
        self.limit = limit
        self.delay = delay
    }

    /// Adds one message's reports; hands the batch over unless `more` input is waiting.
    func add(_ reports: [AttributeReport], more: Bool) {
        let (full, schedule) = pending.withLock { p -> (Bool, Bool) in
            p.reports += reports
            guard more, p.reports.count < limit else { return (true, false) }
            defer { p.scheduled = true }
            return (false, !p.scheduled)
        }
        if full {
            flush()
        } else if schedule {
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in
                pending.withLock { $0.scheduled = false }
                flush()
            }
        }
    }

    /// Hands over whatever is waiting (nothing: no call).
    func flush() {
        handing.withLock { _ in
            let batch = pending.withLock { p -> [AttributeReport] in
                defer { p.reports = [] }
                return p.reports
            }
            if !batch.isEmpty { context.report(batch) }
        }
    }
}
