public import HomeModel
import DequeModule
import DriverAPI
import HashTreeCollections
import Synchronization

/// One item of an accepted change, as the automation engine sees it.
public enum TappedItem: Sendable, Hashable {
    /// An attribute's accepted value after a report (the engine keeps the previous one).
    case attribute(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value)
    /// An event (never coalesced).
    case event(DeviceEvent)
    /// A device's shape changed (added, connectivity, commissioning, removed): its aggregated
    /// connectivity now, nil when the device is gone.
    case device(DeviceID, connectivity: ConnectivityState?)
}

/// One accepted change: its core version, origin, monotonic time and items, in core order.
public struct TappedChange: Sendable {
    public let version: UInt64
    public let origin: ChangeOrigin
    /// When the core accepted it (monotonic), for latency.
    public let acceptedAt: ContinuousClock.Instant
    public let items: [TappedItem]
}

/// A lossless, bounded queue of every accepted change, filled under the core's lock (so in
/// version order) and drained by one reader (the automation engine).
///
/// Unlike device subscriptions, which coalesce to the newest state, the tap keeps every
/// transition. When the reader falls `capacity` changes behind, further changes are counted
/// in ``dropped`` (never silently lost): the reader sees the count and traces and alarms it.
/// Offering costs a lock and an append; with no tap installed the core pays one nil check.
public final class ChangeTap: Sendable {
    struct State {
        var queue = Deque<TappedChange>()
        var dropped: UInt64 = 0
        /// The version of the newest dropped change since the last take (0: none).
        var newestDropped: UInt64 = 0
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
        /// The reader has nothing that any change could concern (``setIdle(_:)``).
        var idle = false
        /// The newest change passed over while idle with nothing waiting (0: none)…
        var idleThrough: UInt64 = 0
        /// …and the newest version handed to the reader before it: once the reader has
        /// processed that far, it has seen everything through `idleThrough`.
        var idleAfter: UInt64 = 0
        /// The newest version ``next()`` has handed out.
        var takenThrough: UInt64 = 0
    }
    let state = Mutex(State())
    public let capacity: Int

    public init(capacity: Int = 10_000) { self.capacity = capacity }

    /// How many changes were dropped because the reader was `capacity` behind.
    public var dropped: UInt64 { state.withLock { $0.dropped } }
    /// How many changes wait to be read.
    public var depth: Int { state.withLock { $0.queue.count } }

    /// Tells the tap whether its reader has anything a change could concern. An idle reader (an
    /// engine with no automation, nothing pending and nobody waiting for it) is not woken, and
    /// nothing is built for it: the core's change costs one lock here instead of a list of
    /// items and a thread's wake-up. The versions passed over still count as read
    /// (``skippedThrough(processed:)``).
    public func setIdle(_ idle: Bool) {
        state.withLock { $0.idle = idle }
    }

    /// Whether the reader said it is idle.
    public var isIdle: Bool { state.withLock { $0.idle } }

    /// Passes over a change when the reader is idle (called under the core's lock, before
    /// anything is built for ``offer(_:)``); false when the change is to be offered.
    func skip(version: UInt64, origin: ChangeOrigin) -> Bool {
        state.withLock { s in
            guard s.idle, !s.closed else { return false }
            if s.queue.isEmpty {
                s.idleThrough = version
                s.idleAfter = s.takenThrough
            } else {
                // Behind changes still to be read: kept in order, with nothing in it (the
                // reader, already woken for those, counts past it).
                s.queue.append(TappedChange(version: version, origin: origin, acceptedAt: .now, items: []))
            }
            return true
        }
    }

    /// The newest version the reader may count as read without seeing it, once it has
    /// processed through `processed`: a change passed over while idle, when everything handed
    /// out before it is processed (0 when none).
    public func skippedThrough(processed: UInt64) -> UInt64 {
        state.withLock { s in processed >= s.idleAfter ? s.idleThrough : 0 }
    }

    /// Appends a change (called under the core's lock); returns the waiter to resume after it.
    func offer(_ change: TappedChange) -> CheckedContinuation<Void, Never>? {
        state.withLock { s in
            guard !s.closed else { return nil }
            if s.queue.count >= capacity {
                s.dropped += 1
                s.newestDropped = change.version
            } else {
                s.queue.append(change)
            }
            defer { s.waiter = nil }
            return s.waiter
        }
    }

    /// What one ``next()`` takes: the waiting changes in order, how many were dropped since the
    /// last take, and the newest dropped change's version (0 when none was), so the reader can
    /// count itself past changes it will never see.
    public struct Batch: Sendable {
        public let changes: [TappedChange]
        public let dropped: UInt64
        public let newestDroppedVersion: UInt64
    }

    /// Takes every waiting change (in order) and the drop count since the last take; waits
    /// when there is none. Returns nil once the tap is closed and empty.
    public func next() async -> Batch? {
        while true {
            let taken: Batch?? = state.withLock { s in
                if !s.queue.isEmpty || s.dropped > 0 {
                    let out = Batch(changes: Array(s.queue), dropped: s.dropped, newestDroppedVersion: s.newestDropped)
                    s.takenThrough = max(s.takenThrough, s.queue.last?.version ?? 0, s.newestDropped)
                    s.queue.removeAll(keepingCapacity: true)
                    s.dropped = 0
                    s.newestDropped = 0
                    return .some(out)
                }
                return s.closed ? .some(nil) : nil
            }
            if let taken { return taken }
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resume = state.withLock { s -> Bool in
                    if !s.queue.isEmpty || s.dropped > 0 || s.closed { return true }
                    s.waiter = c
                    return false
                }
                if resume { c.resume() }
            }
        }
    }

    /// Ends the tap: ``next()`` returns what is left, then nil.
    public func close() {
        let w = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.closed = true
            defer { s.waiter = nil }
            return s.waiter
        }
        w?.resume()
    }
}

/// One attribute of one device within a batch of reports.
struct ReportKey: Hashable {
    let localID: String
    let trait: TraitID
    let attribute: AttributeID
}

extension HomeCore {
    /// Installs the lossless change tap (one at a time; nil removes it). `seed` is handed the
    /// state under the same lock, so the reader knows exactly what the first tapped change
    /// follows.
    public func installTap(_ tap: ChangeTap?, seed: (HomeState) -> Void = { _ in }) {
        inner.withLock { inner in
            seed(inner.state)
            inner.tap = tap
        }
    }

    /// What the tap gets for one applied change (called under the lock, only with a tap).
    ///
    /// A batch of reports (an MQTT plugin hands over the messages it read back to back in one)
    /// may carry one attribute more than once: 20 °C, then 35 °C. The state after the batch holds
    /// only the last, but each value was accepted in turn, so each reaches the tap, in order: an
    /// automation waiting for "above 30" after "below 25" must see both. An earlier value the
    /// catalogue refused is left out, as the core left it out.
    static func tapped(
        _ change: HomeChange, _ outcome: HomeOutcome, _ after: HomeState, catalog: Catalog, at: ContinuousClock.Instant
    ) -> TappedChange {
        var items: [TappedItem] = []
        var changed: [DeviceID: DeviceChangeKind] = [:]
        for (id, kind) in outcome.devices { changed[id] = kind }
        if case .report(let plugin, let reports, _) = change {
            // Where an attribute is reported again later in the batch (rare: found in one pass).
            var again = Set<Int>()
            if reports.count > 1 {
                var last: [ReportKey: Int] = [:]
                for (i, r) in reports.enumerated() {
                    let key = ReportKey(localID: r.localID, trait: r.trait, attribute: r.attribute)
                    if let earlier = last[key] { again.insert(earlier) }
                    last[key] = i
                }
            }
            for (i, r) in reports.enumerated() {
                let id = DeviceID(plugin: plugin, local: r.localID)
                guard changed[id] != nil, let device = after.devices[id] else { continue }
                if again.contains(i) {
                    guard HomeState.refusal(of: r, catalog: catalog) == nil else { continue }
                    for t in device.types where (r.deviceType == nil || t.id == r.deviceType) && t.traits[r.trait]?.attributes[r.attribute] != nil {
                        items.append(.attribute(device: id, deviceType: t.id, trait: r.trait, attribute: r.attribute, value: r.value))
                    }
                    continue
                }
                for t in device.types where r.deviceType == nil || t.id == r.deviceType {
                    guard let value = t.traits[r.trait]?.attributes[r.attribute] else { continue }
                    items.append(.attribute(device: id, deviceType: t.id, trait: r.trait, attribute: r.attribute, value: value))
                }
            }
        }
        for (id, kind) in outcome.devices where kind != .attributes {
            items.append(.device(id, connectivity: after.devices[id]?.sourceConnectivity.connectivityState))
        }
        for e in outcome.events { items.append(.event(e)) }
        return TappedChange(version: outcome.version, origin: outcome.origin, acceptedAt: at, items: items)
    }
}
