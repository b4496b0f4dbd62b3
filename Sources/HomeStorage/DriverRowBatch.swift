import HomeCore
import HomeModel

/// A driver's registry rows (``LayoutDelta/fromDriver``: devices published, removed, gone
/// on- or offline) waiting to be written together: the pure state behind
/// ``HearthDatabase/flushDriverRows()``.
///
/// At start-up a plugin publishes every device it knows at once (1,000 retained MQTT sensors);
/// one transaction per row kept the writer busy for most of the start. Rows queue here and go
/// to SQLite in one transaction when `limit` of them wait, when the window since the first of
/// them ends, before any other write, before any read of the registry, and at shutdown.
struct DriverRowBatch: Sendable {
    /// Rows that make the queue write at once.
    let limit: Int
    /// Queued, oldest first.
    private(set) var pending: [LayoutDelta] = []
    /// A flush is scheduled for the end of the current window.
    private(set) var timerSet = false
    /// Batches taken by a writer and not yet committed.
    private(set) var writing = 0
    /// Why the last flush nobody waited for (the window's) failed; handed to the next caller.
    var failure: HomeError?

    init(limit: Int) { self.limit = max(1, limit) }

    /// What the caller of ``add(_:)`` is to do next.
    enum Next: Equatable, Sendable {
        case nothing
        /// The first row of a window: schedule a flush at its end.
        case scheduleFlush
        /// `limit` rows wait: write them now.
        case flushNow
    }

    mutating func add(_ delta: LayoutDelta) -> Next {
        pending.append(delta)
        if pending.count >= limit { return .flushNow }
        if !timerSet {
            timerSet = true
            return .scheduleFlush
        }
        return .nothing
    }

    /// The window ended: the next row starts another.
    mutating func windowEnded() { timerSet = false }

    /// Nothing queued and nothing being written: a read sees every row already.
    var isSettled: Bool { pending.isEmpty && writing == 0 }

    /// Hands the queued rows to a writer (call ``committed()`` once it is done, failed or not).
    mutating func take() -> [LayoutDelta] {
        defer { pending = [] }
        writing += 1
        return pending
    }

    mutating func committed() { writing -= 1 }
}
