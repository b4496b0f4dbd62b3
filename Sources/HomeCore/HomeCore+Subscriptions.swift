import HomeModel
import Synchronization
import HashTreeCollections

extension HomeCore {
    /// The storage a principal sees for a query kind, as `TreeDictionary<ID, Snapshot>`.
    func storage<Element: HomeElement>(
        _ kind: QueryKind, _ state: HomeState, _ principal: Principal, as: Element.Type = Element.self
    ) -> HomeSet<Element>.Storage {
        let any: Any
        switch kind {
        case .devices:
            if let scope = scoped(principal).scope {
                var filtered = TreeDictionary<DeviceID, DeviceSnapshot>()
                for (id, d) in state.commissioned {
                    if let v = scope.view(of: d, catalog: catalog) { filtered[id] = v }
                }
                any = filtered
            } else {
                any = state.commissioned
            }
        case .discovered:
            any = principal.role == .admin
                ? state.discovered : TreeDictionary<DeviceID, DeviceSnapshot>()
        case .structures:
            any = state.structures
        case .rooms:
            any = state.rooms
        }
        return any as! HomeSet<Element>.Storage
    }

    func currentSet<Element: HomeElement>(_ kind: QueryKind, for principal: Principal, backend: Home) throws(HomeError) -> HomeSet<Element> {
        try checkSession(principal)
        let state = self.state
        return HomeSet(storage: storage(kind, state, principal, as: Element.self), version: state.version, backend: backend)
    }

    func checkSession(_ principal: Principal) throws(HomeError) {
        if isRevoked(principal) { throw .permissionDenied("this session's access was revoked") }
    }

    /// Whether an outcome touches a query kind.
    static func touches(_ kind: QueryKind, _ outcome: HomeOutcome) -> Bool {
        switch kind {
        case .devices, .discovered: outcome.devices.contains { $0.1 != .attributes }
        case .structures: outcome.structuresChanged
        case .rooms: outcome.roomsChanged
        }
    }

    func subscribeBatched<Element: HomeElement>(_ kind: QueryKind, home: Home) -> Updates<HomeSet<Element>> {
        let principal = home.principal
        let box = IDBox()
        let channelBox = ChannelBox<PendingSet>()
        // The channel holds the state a change left (a cheap copy: the trees are shared) and
        // the set is worked out when the reader takes it: a change costs each subscriber a push,
        // not a filtered copy of every device, and a reader that fell behind builds one set for
        // all the changes it missed.
        let channel = Channel<PendingSet>(
            policy: .latest,
            // After a scope change: the set as the new scope shows it, at the current version.
            resync: { [weak self] in
                guard let self, let channel = channelBox.channel else { return nil }
                return self.inner.withLock { inner in
                    channel.markResynced(at: inner.state.version)
                    return PendingSet(state: inner.state, origin: nil)
                }
            },
            onTerminate: { [weak self] in
                if let id = box.id { self?.unregister(id) }
            })
        channelBox.channel = channel
        let observer = Observer(
            session: principal.sessionID, device: nil,
            onChange: { _, after, outcome in
                guard Self.touches(kind, outcome) else { return nil }
                let pending = PendingSet(state: after, origin: outcome.origin)
                return { channel.push(pending, version: after.version) }
            },
            finish: { channel.finish() },
            refresh: { channel.requestResync() })
        box.id = register(observer)
        if box.id == nil {
            channel.finish()
        } else {
            // Race-free: the current set, then every later change; an older set never
            // overwrites a newer one because the channel ignores versions it has passed.
            let state = self.state
            channel.push(PendingSet(state: state, origin: nil), version: state.version)
        }
        let source = MappedSource(base: channel) { [weak self] (pending: PendingSet) -> HomeSet<Element> in
            let storage: HomeSet<Element>.Storage = self?.storage(kind, pending.state, principal, as: Element.self) ?? [:]
            return HomeSet(storage: storage, version: pending.state.version, origin: pending.origin, backend: home)
        }
        return Updates(source, ending: home.ending)
    }

    /// How many diffs a `stream()` subscriber may fall behind before it gets a fresh snapshot.
    public static var streamBufferLimit: Int { 1024 }

    func subscribeStream<Element: HomeElement>(_ kind: QueryKind, home: Home) -> Updates<QueryChange<Element>> {
        let principal = home.principal
        let box = IDBox()
        let channelBox = ChannelBox<QueryChange<Element>>()
        let channel = Channel<QueryChange<Element>>(
            policy: .bounded(Self.streamBufferLimit),
            resync: { [weak self] in
                guard let self, let channel = channelBox.channel else { return nil }
                // Take the snapshot and move the channel's floor under the core's lock, so no
                // change falls between the snapshot and the diffs that follow it.
                let (storage, version): (HomeSet<Element>.Storage, UInt64) = self.inner.withLock { inner in
                    channel.markResynced(at: inner.state.version)
                    return (self.storage(kind, inner.state, principal, as: Element.self), inner.state.version)
                }
                return .snapshot(HomeSet(storage: storage, version: version, backend: home))
            },
            metrics: metrics,
            onTerminate: { [weak self] in if let id = box.id { self?.unregister(id) } })
        channelBox.channel = channel
        let observer = Observer(
            session: principal.sessionID, device: nil,
            onChange: { [weak self] before, after, outcome in
                guard let self, Self.touches(kind, outcome) else { return nil }
                return {
                    for change in self.diff(kind, before, after, outcome, principal, home) as [QueryChange<Element>] {
                        channel.push(change, version: after.version)
                    }
                }
            },
            finish: { channel.finish() },
            refresh: { channel.requestResync() })
        box.id = register(observer)
        if box.id == nil { channel.finish() } else { channel.requestResync() }
        return Updates(channel, ending: home.ending)
    }

    func diff<Element: HomeElement>(
        _ kind: QueryKind, _ before: HomeState?, _ after: HomeState, _ outcome: HomeOutcome, _ principal: Principal, _ home: Home
    ) -> [QueryChange<Element>] {
        switch kind {
        case .structures, .rooms:
            guard let before else { return [] }
            let old: HomeSet<Element>.Storage = storage(kind, before, principal, as: Element.self)
            let new: HomeSet<Element>.Storage = storage(kind, after, principal, as: Element.self)
            var changes: [QueryChange<Element>] = []
            for (id, value) in new {
                if let o = old[id] {
                    if o != value { changes.append(.updated(Element.make(value, backend: home))) }
                } else {
                    changes.append(.added(Element.make(value, backend: home)))
                }
            }
            for (id, _) in old where new[id] == nil { changes.append(.removed(id)) }
            return changes
        case .devices, .discovered:
            var changes: [QueryChange<Element>] = []
            for (id, kindOfChange) in outcome.devices where kindOfChange != .attributes {
                let now = visible(kind, after.devices[id], principal)
                // Without a previous version, visibility did not change.
                let was = before.map { visible(kind, $0.devices[id], principal) } ?? now
                switch (was, now) {
                case (nil, nil): continue
                case (nil, let n?): changes.append(.added(HomeDevice(snapshot: n, backend: home) as! Element))
                case (_?, nil): changes.append(.removed(id as! Element.ID))
                case (let w?, let n?):
                    if w != n { changes.append(.updated(HomeDevice(snapshot: n, backend: home) as! Element)) }
                }
            }
            return changes
        }
    }

    func visible(_ kind: QueryKind, _ device: DeviceSnapshot?, _ principal: Principal) -> DeviceSnapshot? {
        guard let device else { return nil }
        switch kind {
        case .devices:
            guard device.commissioning == .commissioned else { return nil }
            return scoped(principal).scope.map { $0.view(of: device, catalog: catalog) } ?? device
        case .discovered:
            return principal.role == .admin && device.commissioning == .discovered ? device : nil
        default:
            return nil
        }
    }

    /// The device now, then on every change (attributes included); coalesced to the newest.
    func subscribeDevice(_ id: DeviceID, home: Home) -> Updates<HomeDevice> {
        let principal = home.principal
        let box = IDBox()
        let channel = Channel<HomeDevice>(policy: .latest, onTerminate: { [weak self] in
            if let id = box.id { self?.unregister(id) }
        })
        let kind: QueryKind = principal.role == .admin ? .discovered : .devices
        // What a change of the device delivers: its view for this principal (shared with every
        // other subscriber that sees it alike), or the end when it is gone or hidden.
        let onDevice: @Sendable (inout DeviceViews, UInt64) -> (@Sendable () -> Void)? = { views, version in
            guard let view = views.view(for: principal) else { return { channel.finish() } }
            return { channel.push(HomeDevice(snapshot: view, backend: home), version: version) }
        }
        let observer = Observer(
            session: principal.sessionID, device: id,
            onChange: { [weak self] _, after, outcome in
                guard let self, outcome.devices.contains(where: { $0.0 == id }) else { return nil }
                var views = DeviceViews(after.devices[id], core: self, catalog: self.catalog)
                return onDevice(&views, after.version)
            },
            finish: { channel.finish() },
            // A scope change that hides the device ends the subscription.
            refresh: { [weak self] in
                guard let self else { return }
                if self.visible(.devices, self.state.devices[id], principal) == nil, kind == .devices { channel.finish() }
            },
            onDevice: onDevice)
        box.id = register(observer)
        let state = self.state
        let view = visible(.devices, state.devices[id], principal)
            ?? (kind == .discovered ? visible(.discovered, state.devices[id], principal) : nil)
        if box.id == nil || view == nil {
            channel.finish()
        } else {
            channel.push(HomeDevice(snapshot: view!, backend: home), version: state.version)
        }
        return Updates(channel, ending: home.ending)
    }

    /// How many events one subscriber may fall behind before the oldest are dropped (and counted).
    public static var eventBufferLimit: Int { 4096 }

    /// Events of visible devices, optionally of one device and trait; never coalesced.
    func subscribeEvents(device: DeviceID?, trait: TraitID?, home: Home) -> Updates<DeviceEvent> {
        let principal = home.principal
        let box = IDBox()
        let channel = Channel<DeviceEvent>(policy: .droppingOldest(Self.eventBufferLimit), metrics: metrics, onTerminate: { [weak self] in
            if let id = box.id { self?.unregister(id) }
        })
        let observer = Observer(
            session: principal.sessionID, device: nil,
            onChange: { [weak self] _, after, outcome in
                guard let self else { return nil }
                let events = outcome.events.filter { e in
                    (device == nil || e.device == device) && (trait == nil || e.trait == trait)
                        && self.visible(.devices, after.devices[e.device], principal)?.type(e.deviceType) != nil
                }
                guard !events.isEmpty else { return nil }
                return { for e in events { channel.push(e, version: e.version) } }
            },
            finish: { channel.finish() })
        box.id = register(observer, events: true)
        if box.id == nil { channel.finish() }
        return Updates(channel, ending: home.ending)
    }
}

extension HomeCore {
    /// Every visible commissioned device now, then the ones whose state changed (attributes,
    /// connectivity or anything else) since the reader last read, each once in its newest
    /// state. Devices that are removed or become hidden are dropped, not sent.
    func subscribeChangedDevices(home: Home) -> Updates<ChangedDevices> {
        Updates(changedDevicesFeed(home: home, notify: nil), ending: home.ending)
    }

    /// The same, told through `notify` and read with ``PolledChangedDevices/poll()``.
    func subscribePolledChangedDevices(home: Home, notify: @escaping @Sendable () -> Void) -> PolledChangedDevices {
        PolledChangedDevices(changedDevicesFeed(home: home, notify: notify), ending: home.ending)
    }

    private func changedDevicesFeed(home: Home, notify: (@Sendable () -> Void)?) -> DeviceFeed {
        let principal = home.principal
        let box = IDBox()
        let feed = DeviceFeed(notify: notify, onTerminate: { [weak self] in if let id = box.id { self?.unregister(id) } })
        let observer = Observer(
            session: principal.sessionID, device: nil,
            onChange: { [weak self] _, after, outcome -> (@Sendable () -> Void)? in
                guard let self else { return nil }
                // Under the core's lock: cheap per device, and in version order.
                var changed: [HomeDevice] = []
                var gone: [DeviceID] = []
                for (id, _) in outcome.devices {
                    if let view = self.visible(.devices, after.devices[id], principal) {
                        changed.append(HomeDevice(snapshot: view, backend: home))
                    } else {
                        gone.append(id)
                    }
                }
                guard feed.record(changed, gone: gone, version: after.version) else { return nil }
                return { feed.wake() }
            },
            finish: { feed.finish() })
        box.id = register(observer, updates: true, seed: { state in
            let all = self.storage(.devices, state, principal, as: HomeDevice.self).values.map {
                HomeDevice(snapshot: $0, backend: home)
            }
            _ = feed.record(all, gone: [], version: state.version)
        })
        if box.id == nil { feed.finish() }
        return feed
    }

    func subscribeChanges(home: Home) -> Updates<ChangeRecord> {
        let box = IDBox()
        let channel = Channel<ChangeRecord>(policy: .droppingOldest(Self.eventBufferLimit), metrics: metrics, onTerminate: { [weak self] in
            if let id = box.id { self?.unregister(id) }
        })
        guard home.principal.role == .admin else {
            channel.finish()
            return Updates(channel, ending: home.ending)
        }
        let observer = Observer(
            session: home.principal.sessionID, device: nil,
            onChange: { _, _, outcome in
                let record = ChangeRecord(outcome)
                return { channel.push(record, version: record.version) }
            },
            finish: { channel.finish() })
        box.id = register(observer, audit: true)
        if box.id == nil { channel.finish() }
        return Updates(channel, ending: home.ending)
    }
}

/// A `batched()` subscriber's pending set: the state a change left, turned into the set the
/// subscriber sees only when it reads.
struct PendingSet: Sendable {
    let state: HomeState
    let origin: ChangeOrigin?
}

/// A subscriber's buffer whose elements are turned into what the reader gets as it reads them.
struct MappedSource<Base: UpdateSource, Element: Sendable>: UpdateSource {
    let base: Base
    let transform: @Sendable (Base.Element) -> Element
    func next() async -> Element? { await base.next().map(transform) }
    func cancel() { base.cancel() }
}

/// Holds an observer's ID once registered (the channel's termination needs it).
final class IDBox: @unchecked Sendable {
    // Written once, before the channel can terminate through a consumer; read after.
    var id: Int?
}

/// Holds a channel for its own resync closure, which is created before the channel.
final class ChannelBox<Element: Sendable>: @unchecked Sendable {
    // Written once right after the channel is created, before any consumer can read it.
    var channel: Channel<Element>?
}

/// One changed device as its `device(id:)` observers see it, worked out once per change: the
/// device is looked up once, and each distinct view (admin or not, under which grant scope) is
/// computed once and shared, instead of a lookup, a scope check and a filtered copy per
/// subscriber. The view is the one ``HomeCore/visible(_:_:_:)`` gives a `device(id:)`
/// subscription: commissioned devices as the principal's current scope shows them, discovered
/// devices to admins only.
struct DeviceViews {
    let device: DeviceSnapshot?
    unowned let core: HomeCore
    let catalog: Catalog
    /// The sessions' changed scopes, read once (only when a scoped principal asks).
    private var overrides: [String: GrantScope]?
    private var seen: [(admin: Bool, scope: GrantScope?, view: DeviceSnapshot?)] = []

    init(_ device: DeviceSnapshot?, core: HomeCore, catalog: Catalog) {
        self.device = device
        self.core = core
        self.catalog = catalog
    }

    /// The device as `principal` sees it now, or nil when it is gone or hidden from it.
    mutating func view(for principal: Principal) -> DeviceSnapshot? {
        guard let device else { return nil }
        let admin = principal.role == .admin
        var scope = principal.scope
        if scope != nil, let session = principal.sessionID {
            if overrides == nil { overrides = core.scopeOverrides.withLock { $0 } }
            scope = overrides![session] ?? scope
        }
        if scope == nil {
            // Unscoped: no copy to share, just the commissioning check.
            switch device.commissioning {
            case .commissioned: return device
            case .discovered: return admin ? device : nil
            }
        }
        if let hit = seen.first(where: { $0.admin == admin && $0.scope == scope }) { return hit.view }
        let view: DeviceSnapshot?
        switch device.commissioning {
        case .commissioned: view = scope!.view(of: device, catalog: catalog)
        case .discovered: view = admin ? device : nil
        }
        seen.append((admin, scope, view))
        return view
    }
}
