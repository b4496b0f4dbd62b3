public import HomeModel
import Synchronization

/// What one read of ``Home/changedDevices()`` gives: every visible commissioned device whose
/// state changed since the previous read, each once and in its newest state.
public struct ChangedDevices: Sendable {
    /// The core's version the newest of these states belongs to.
    public let version: UInt64
    /// Sorted by ID.
    public let devices: [HomeDevice]
}

/// One subscriber's buffer for ``Home/changedDevices()``: at most one pending state per device,
/// keyed by ID, so a slow reader costs at most one entry per device however many reports it
/// misses, and gets each changed device once with its newest state.
///
/// Changes are recorded while the core's lock is held (so they arrive in version order and a
/// newer state can never be overwritten by an older one); the reader is resumed afterwards.
final class DeviceFeed: UpdateSource {
    struct State: ReaderState {
        var pending: [DeviceID: HomeDevice] = [:]
        var version: UInt64 = 0
        var waiter: Waiter?
        var finished = false
        var hasNews: Bool { !pending.isEmpty }
    }

    let state = Mutex(State())
    let onTerminate: @Sendable () -> Void

    init(onTerminate: @escaping @Sendable () -> Void) { self.onTerminate = onTerminate }

    /// Records new states and forgets devices that are gone or hidden (``Home/devices()``
    /// reports those). Call with the core's lock held; returns whether ``wake()`` is needed.
    func record(_ changed: [HomeDevice], gone: [DeviceID], version: UInt64) -> Bool {
        state.withLock { s in
            guard !s.finished else { return false }
            for id in gone { s.pending[id] = nil }
            for d in changed { s.pending[d.id] = d }
            s.version = max(s.version, version)
            return !changed.isEmpty && s.waiter != nil
        }
    }

    /// Resumes a waiting reader.
    func wake() {
        state.withLock { $0.takeWaiter() }?.resume()
    }

    /// Ends the subscription: the reader gets what is pending, then nil.
    func finish() {
        let (waiter, wasFinished) = state.withLock { $0.markFinished() }
        waiter?.resume()
        if !wasFinished { onTerminate() }
    }

    func cancel() {
        state.withLock { $0.pending.removeAll() }
        finish()
    }

    func next() async -> ChangedDevices? {
        while true {
            let taken: ChangedDevices?? = state.withLock { s in
                if !s.pending.isEmpty {
                    let devices = s.pending.values.sorted { $0.id < $1.id }
                    s.pending.removeAll(keepingCapacity: true)
                    return .some(ChangedDevices(version: s.version, devices: devices))
                }
                return s.finished ? .some(nil) : nil
            }
            if let taken { return taken }
            if Task.isCancelled {
                cancel()
                return nil
            }
            await parkReader({ c in state.withLock { $0.park(c) } }, onCancel: { self.cancel() })
        }
    }
}
