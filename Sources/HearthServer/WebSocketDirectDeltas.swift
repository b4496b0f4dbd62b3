import HomeCore
import HomeModel
import NIOCore
import NIOWebSocket
import Synchronization

/// How a `deviceDeltas` subscription paces its frames under a flood: after a frame of
/// ``busyFrame`` changed devices or more the next is taken ``rest`` later (by default at most 50
/// busy frames a second per subscriber; what changed meanwhile goes once per device, in its
/// newest state). A frame of fewer changes leaves the next one immediate.
public struct DeviceDeltaPacing: Sendable, Hashable {
    /// A frame with at least this many changed devices means a flood.
    public var busyFrame: Int
    /// How long after a busy frame the next is taken.
    public var rest: Duration

    public init(busyFrame: Int = 64, rest: Duration = .milliseconds(20)) {
        self.busyFrame = busyFrame
        self.rest = rest
    }

    /// 64 changed devices, 20 ms.
    public static let standard = DeviceDeltaPacing()
}

/// What a `deviceDeltas` subscriber has been sent: each device's last state, so the next
/// message carries only the attributes that changed since (or the whole device, the first time
/// and when its shape changed).
struct DeltaTracker {
    /// The device as last sent (a ``HomeDevice`` is one shared reference: keeping it copies none
    /// of its snapshot).
    private var seen: [DeviceID: HomeDevice] = [:]

    /// The changes to send for these devices: none for a device as it was last sent.
    mutating func changes(_ devices: [HomeDevice]) -> [(HomeDevice, [AttributeChange]?)] {
        var changes: [(HomeDevice, [AttributeChange]?)] = []
        changes.reserveCapacity(devices.count)
        for device in devices {
            // One lookup per device; `attributeChanges` is the comparison (empty: nothing the
            // delta carries changed, nil: the shape changed and the whole device goes).
            if let i = seen.index(forKey: device.id) {
                let attributes = device.snapshot.attributeChanges(since: seen.values[i].snapshot)
                if attributes?.isEmpty == true { continue }
                changes.append((device, attributes))
                seen.values[i] = device
            } else {
                changes.append((device, nil))
                seen[device.id] = device
            }
        }
        return changes
    }
}

/// A `deviceDeltas` subscription written by the socket's own event loop: the core tells the
/// loop that devices changed (one `execute` per batch, from the thread that changed them), and
/// the loop takes the changes, builds the delta and writes the frame. No task is woken and no
/// actor entered per change: at a paced rate that is one thread wake per message instead of
/// three (core → pool → actor → loop).
///
/// Back-pressure is the channel's: while its outbound buffer is above the high-water mark
/// (64 KiB by default) nothing is taken, so the core coalesces per device as it does for a slow
/// awaiting reader; the loop reads again once the last write has gone out.
///
/// Under a flood the frames are paced (``DeviceDeltaPacing``): after a busy frame the
/// next is taken a rest later, so what changed meanwhile goes once per device in its newest
/// state (at most 50 busy frames a second per subscriber). A frame of fewer changes — a paced
/// rate, a single change — leaves the next one immediate.
///
/// Everything but ``start()``, ``cancel()`` and the notification runs on `loop`; the state is
/// confined to it (hence `@unchecked Sendable`).
final class WebSocketDirectDeltas: @unchecked Sendable {
    let channel: any Channel
    let loop: any EventLoop
    let id: String
    let text: WebSocketText
    /// Set once, before ``start()``; read only on the loop afterwards.
    private var feed: PolledChangedDevices?
    private var tracker = DeltaTracker()
    private var started = false
    private var ended = false
    private var first = true
    /// The last frame written, while it is not yet out (what a full buffer waits on).
    private var lastWrite: EventLoopFuture<Void>?
    private var waitingForWritable = false
    /// After a busy frame, until the pacing's rest has passed.
    private var resting = false
    private let pacing: DeviceDeltaPacing
    private let cancelled = Atomic<Bool>(false)
    /// How the writing ended, for the session (once).
    enum Outcome: Sendable { case sourceEnded, socketClosed }
    let finished: AsyncStream<Outcome>
    private let finish: AsyncStream<Outcome>.Continuation

    init(channel: any Channel, id: String, text: WebSocketText, home: Home, pacing: DeviceDeltaPacing = .standard) {
        self.channel = channel
        self.pacing = pacing
        self.loop = channel.eventLoop
        self.id = id
        self.text = text
        (finished, finish) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        feed = home.polledChangedDevices(notify: { [weak self] in
            guard let self else { return }
            self.loop.execute { self.drain() }
        })
    }

    /// Begins writing: call once the `subscribed` reply has been written (the loop runs it
    /// after that reply's write, which was scheduled on the loop before).
    func start() {
        loop.execute {
            self.started = true
            self.drain()
        }
    }

    /// Stops writing (unsubscribed, the socket ended): nothing more is written after this,
    /// even by a read already scheduled.
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        loop.execute {
            self.feed?.cancel()
            self.feed = nil
            self.end(.socketClosed)
        }
    }

    /// Takes and writes what changed while the channel can take it.
    private func drain() {
        loop.preconditionInEventLoop()
        guard started, !ended, !resting, let feed else { return }
        if cancelled.load(ordering: .acquiring) { return }
        guard channel.isActive else { return end(.socketClosed) }
        guard channel.isWritable else { return waitForWritable() }
        switch feed.poll() {
        case .none:
            return
        case .finished:
            end(.sourceEnded)
        case .changes(let changed):
            let changes = tracker.changes(changed.devices)
            if changes.isEmpty && !first { return }
            first = false
            write(text.deltaBytes(id: id, version: changed.version, changes))
            if changes.count >= pacing.busyFrame { rest() }
        }
    }

    /// A busy frame went: the next drain runs a rest from now (a notification meanwhile
    /// finds the subscription resting and leaves the changes to it).
    private func rest() {
        resting = true
        loop.scheduleTask(in: TimeAmount(pacing.rest)) { [self] in
            resting = false
            drain()
        }
    }

    private func write(_ message: [UInt8]) {
        var buffer = channel.allocator.buffer(capacity: message.count)
        buffer.writeBytes(message)
        let written = channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer))
        lastWrite = written
        written.whenFailure { [self] _ in end(.socketClosed) }
        written.whenSuccess { [self] in
            if lastWrite === written { lastWrite = nil }
        }
    }

    /// The channel's buffer is full: read again once the last frame is out, or shortly when the
    /// buffer was filled by other messages.
    private func waitForWritable() {
        guard !waitingForWritable else { return }
        waitingForWritable = true
        let resume: @Sendable () -> Void = { [self] in
            loop.preconditionInEventLoop()
            waitingForWritable = false
            drain()
        }
        if let lastWrite {
            lastWrite.whenComplete { _ in resume() }
        } else {
            loop.scheduleTask(in: .milliseconds(5), resume)
        }
    }

    private func end(_ how: Outcome) {
        guard !ended else { return }
        ended = true
        feed?.cancel()
        feed = nil
        finish.yield(how)
        finish.finish()
    }
}
