public import HomeCore
public import HomeModel
public import HomeStorage
public import Logging
public import MatterInteraction
import MatterTLV
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The home's exposed devices as bridged endpoints of a Matter node (issue 21): it keeps the
/// node's endpoints under the Aggregator in step with what the exposure policy (shared with the
/// HAP bridge and MQTT export) lets out, as the principal `exposure:matter`.
///
/// Per exposed device:
/// - a **Bridged Node** endpoint (0x0013, its parent the Aggregator) with Bridged Device Basic
///   Information (NodeLabel = name, Reachable = connectivity, VendorName/ProductName from the
///   device's manufacturer and model, SerialNumber/UniqueID from its ID) and Fixed Label
///   (`"room": <room name>`);
/// - its device type's clusters from the catalogue (same IDs): on the Bridged Node endpoint
///   itself when the device has one type, else on one child endpoint per type (a cluster
///   appears at most once per endpoint, as the spec's composed devices do).
///
/// On the Aggregator, the Actions cluster (0x0025) lists the rooms: one EndpointList (Type Room)
/// per room with exposed devices, its devices' endpoints in it (``ActionsCluster``).
///
/// Endpoint numbers are kept in ``MatterEndpointStore`` (stable across restarts, never reused).
/// A state change marks the changed clusters (`MatterNode.markChanged`) and calls
/// `dataChanged` (wire it to `InteractionServer.dataChanged()`), so subscribed controllers
/// get a report. A controller's write or command is checked (read-only exposure:
/// UNSUPPORTED_ACCESS; a bad argument: CONSTRAINT_ERROR; an unknown command:
/// UNSUPPORTED_COMMAND; an unreachable device: FAILURE), then sent through the core in order;
/// the new state comes back as a report.
///
/// ```swift
/// let endpoints = MatterHomeEndpoints(core: core, settings: exposure, node: node, store: db.matterEndpointStore(),
///                                     dataChanged: { server.dataChanged() })
/// endpoints.start()
/// …
/// await endpoints.stop()
/// ```
public final class MatterHomeEndpoints: Sendable {
    /// Where one device's clusters are.
    public struct Placement: Hashable, Sendable {
        /// The Bridged Node endpoint (Bridged Device Basic Information, Fixed Label).
        public var node: UInt16
        /// The endpoint of each exposed device type (the node itself when there is one type).
        public var types: [DeviceTypeID: UInt16]
    }

    public let core: HomeCore
    public let settings: ExposureSettings
    public let node: MatterNode
    public let aggregator: UInt16
    public let store: MatterEndpointStore
    /// The lowest number handed to a bridged endpoint.
    public let firstEndpoint: UInt16
    let dataChanged: @Sendable () -> Void
    let logger: Logger
    let shared: BridgeShared
    let running = Mutex<Task<Void, Never>?>(nil)
    /// What is on the node now, per device (touched by the one sync loop, and by `stop`).
    let placed = Mutex<[DeviceID: Layout]>([:])
    /// Endpoint numbers by key, as stored.
    let numbers = Mutex<[String: UInt16]?>(nil)
    /// The rooms as the Aggregator's Actions EndpointLists.
    let roomLists = Mutex(RoomLists())

    /// - Parameters:
    ///   - aggregator: the Aggregator endpoint the bridged nodes hang under (part A's endpoint 1).
    ///   - firstEndpoint: the lowest number for a bridged endpoint (above the root and the aggregator).
    ///   - dataChanged: called after values or endpoints changed (the IM server's `dataChanged()`).
    public init(
        core: HomeCore, settings: ExposureSettings, node: MatterNode, aggregator: UInt16 = 1, store: MatterEndpointStore,
        firstEndpoint: UInt16 = 2, dataChanged: @escaping @Sendable () -> Void = {}, logger: Logger = Logger(label: "hearth.matter.bridge")
    ) {
        self.core = core
        self.settings = settings
        self.node = node
        self.aggregator = aggregator
        self.store = store
        self.firstEndpoint = max(firstEndpoint, aggregator &+ 1)
        self.dataChanged = dataChanged
        self.logger = logger
        shared = BridgeShared(catalog: core.catalog, logger: logger, roomNamed: { [core] id in core.state.rooms.first { $0.key == id }?.value.name })
    }

    /// Where a device's clusters are, nil when it is not exposed (or not placed yet).
    public func placement(of device: DeviceID) -> Placement? {
        placed.withLock { $0[device]?.placement }
    }

    /// Every exposed device's placement.
    public var placements: [DeviceID: Placement] { placed.withLock { $0.mapValues(\.placement) } }

    /// Starts following the exposed devices (idempotent).
    public func start() {
        running.withLock { task in
            guard task == nil else { return }
            node.addCluster(ActionsCluster(lists: { [weak self] in self?.roomLists.withLock { $0.current } ?? [] }), to: aggregator)
            let (actions, feed) = AsyncStream<PendingAction>.makeStream(bufferingPolicy: .bufferingOldest(256))
            shared.state.withLock { $0.actions = feed }
            task = Task { await self.run(actions: actions) }
        }
    }

    /// Stops following and removes the bridged endpoints from the node (the Aggregator's
    /// PartsList empties).
    public func stop() async {
        let task = running.withLock { t in defer { t = nil }; return t }
        shared.state.withLock { s in
            s.actions?.finish()
            s.actions = nil
        }
        task?.cancel()
        await task?.value
        let layouts = placed.withLock { p in defer { p = [:] }; return p }
        for layout in layouts.values { remove(layout) }
        shared.state.withLock { $0.devices = [:] }
        let roomsChanged = refreshRoomLists()
        if !layouts.isEmpty || roomsChanged { dataChanged() }
    }

    // MARK: Following the home

    func run(actions: AsyncStream<PendingAction>) async {
        do {
            let known = try store.all()
            numbers.withLock { $0 = known }
        } catch {
            logger.error("Matter bridge: \(error.message); no device is bridged")
            return
        }
        await withDiscardingTaskGroup { group in
            group.addTask {
                // Commands in the order controllers sent them, as the door's principal now.
                for await action in actions {
                    let home = self.core.home(for: self.settings.current.principal(door: "matter"))
                    do {
                        switch action {
                        case .invoke(let request): _ = try await home.invoke(request)
                        case .write(let d, let t, let trait, let attribute, let value):
                            try await home.write(device: d, deviceType: t, trait: trait, attribute: attribute, value: value)
                        }
                    } catch {
                        let message = (error as? HomeError)?.message ?? "\(error)"
                        self.logger.warning("Matter command failed", metadata: ["device": "\(action.device)", "error": "\(message)"])
                    }
                }
            }
            group.addTask { await self.followPolicy() }
        }
    }

    func followPolicy() async {
        var session: Task<Void, Never>?
        for await policy in settings.updates() {
            if Task.isCancelled { break }
            session?.cancel()
            await session?.value
            shared.state.withLock { $0.policy = policy }
            session = Task { await self.session(policy: policy) }
        }
        session?.cancel()
        await session?.value
    }

    func session(policy: ExposurePolicy) async {
        let home = core.home(for: policy.principal(door: "matter"))
        enum Input { case all([DeviceSnapshot]), changed([DeviceSnapshot]), rooms([RoomID: String]) }
        let (inputs, feed) = AsyncStream<Input>.makeStream()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await set in home.devices().batched() { feed.yield(.all(set.map(\.snapshot))) }
                feed.finish()
            }
            group.addTask {
                for await changed in home.changedDevices() { feed.yield(.changed(changed.devices.map(\.snapshot))) }
            }
            group.addTask {
                // A device's events (a button's Switch presses) as the node's events.
                for await event in home.events() { self.emit(event) }
            }
            group.addTask {
                for await rooms in home.rooms().batched() {
                    feed.yield(.rooms(Dictionary(rooms.map { ($0.id, $0.name) }, uniquingKeysWith: { $1 })))
                }
            }
            group.addTask {
                var current: [DeviceID: DeviceSnapshot] = [:]
                for await input in inputs {
                    switch input {
                    case .all(let devices): current = Dictionary(devices.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
                    case .changed(let devices): for d in devices { current[d.id] = d }
                    case .rooms(let names):
                        self.renameRooms(names)
                        continue
                    }
                    let exposed = current.values.compactMap { policy.view(of: $0, catalog: self.shared.catalog) }
                    self.apply(Dictionary(exposed.map { ($0.id, $0) }, uniquingKeysWith: { $1 }))
                }
            }
        }
    }

    /// New room names: the Fixed Label of the devices in a renamed room changes.
    func renameRooms(_ names: [RoomID: String]) {
        let touched: [DeviceID] = shared.state.withLock { s in
            let old = s.rooms
            s.rooms = names
            return s.devices.values.filter { d in d.roomID.map { old[$0] != names[$0] } ?? false }.map(\.id)
        }
        let nodes = placed.withLock { p in touched.compactMap { p[$0]?.node } }
        for n in nodes { node.markChanged(ConcreteClusterPath(endpoint: n, cluster: RoomLabelCluster.id)) }
        let listsChanged = refreshRoomLists()
        if !nodes.isEmpty || listsChanged { dataChanged() }
    }

    /// Brings the node in line with the exposed devices: new devices get endpoints, removed ones
    /// lose them, a device whose layout changed is rebuilt, and changed values are marked.
    func apply(_ exposed: [DeviceID: DeviceSnapshot]) {
        let catalog = shared.catalog
        // Endpoint numbers: stored ones, and new ones for keys never seen.
        var known = numbers.withLock { $0 ?? [:] }
        let needed = exposed.values.sorted { $0.id < $1.id }.flatMap { Layout.keys(of: $0) }
        let missing = needed.filter { known[$0] == nil }
        if !missing.isEmpty {
            do {
                known.merge(try store.assign(missing, first: firstEndpoint)) { $1 }
                numbers.withLock { $0 = known }
            } catch {
                logger.error("Matter bridge: \(error.message)")
            }
        }
        var layouts: [DeviceID: Layout] = [:]
        for d in exposed.values {
            guard let layout = Layout(d, numbers: known, aggregator: aggregator, catalog: catalog) else { continue }
            layouts[d.id] = layout
        }
        let bridged = exposed.filter { layouts[$0.key] != nil }
        let before = shared.state.withLock { s in
            defer { s.devices = bridged }
            return s.devices
        }
        let old = placed.withLock { p in defer { p = layouts }; return p }
        var changed = false
        for (id, layout) in old where layouts[id] != layout {
            let keep = Set(layouts[id]?.endpoints.map(\.id) ?? [])
            for e in layout.endpoints.reversed() where !keep.contains(e.id) { node.removeEndpoint(e.id) }
            if layouts[id] == nil { logger.info("Matter bridged device removed", metadata: ["device": "\(id)", "endpoint": "\(layout.node)"]) }
            changed = true
        }
        for (id, layout) in layouts.sorted(by: { $0.key < $1.key }) {
            if let previous = old[id], previous == layout {
                changed = markChanges(from: before[id], to: bridged[id], layout) || changed
                continue
            }
            install(layout, device: id)
            if old[id] == nil { logger.info("Matter bridged device added", metadata: ["device": "\(id)", "endpoint": "\(layout.node)"]) }
            changed = true
        }
        changed = refreshRoomLists() || changed
        if changed { dataChanged() }
    }

    /// Recomputes the rooms' EndpointLists from the placed devices and their rooms; when they
    /// changed, the Aggregator's Actions cluster gets a new data version (subscribers a report).
    func refreshRoomLists() -> Bool {
        let layouts = placed.withLock { $0 }
        let rooms = shared.state.withLock { s in s.devices.mapValues(\.roomID) }
        var byRoom: [RoomID: (name: String, endpoints: [UInt16])] = [:]
        for (device, layout) in layouts {
            guard let room = rooms[device] ?? nil, let name = shared.roomNamed(room) else { continue }
            byRoom[room, default: (name, [])].endpoints += layout.endpoints.map(\.id)
        }
        guard roomLists.withLock({ $0.update(byRoom) }) else { return false }
        node.markChanged(ConcreteClusterPath(endpoint: aggregator, cluster: ActionsCluster.id))
        return true
    }

    /// Adds (or replaces) a device's endpoints, the Bridged Node first.
    func install(_ layout: Layout, device: DeviceID) {
        for e in layout.endpoints {
            var clusters: [any ClusterServer] = []
            if e.id == layout.node {
                clusters.append(BridgedInfoCluster(shared: shared, device: device, identity: layout.identity))
                clusters.append(RoomLabelCluster(shared: shared, device: device))
            }
            if let type = e.deviceType {
                let values = DeviceValues(shared: shared, device: device, deviceType: type)
                for c in e.clusters {
                    do {
                        clusters.append(try CatalogCluster(trait: c.trait, source: values, attributes: c.attributes, commands: c.commands,
                                                           events: c.events, featureMap: c.featureMap, catalog: shared.catalog))
                    } catch {
                        logger.warning("Matter bridge: cluster left out: \(error)", metadata: ["device": "\(device)"])
                    }
                }
            }
            node.addEndpoint(e.id, deviceTypes: e.deviceTypes, parent: e.parent, clusters: clusters)
        }
    }

    /// A device event of an exposed device as an event of its type's endpoint (the fields by
    /// the catalogue's order as context tags), then a report to subscribers.
    func emit(_ event: DeviceEvent) {
        let target: UInt16? = placed.withLock { p in
            guard let layout = p[event.device] else { return nil }
            return layout.endpoints.first { e in
                e.deviceType == event.deviceType && e.clusters.contains { $0.trait == event.trait.rawValue && $0.events.contains(event.event.rawValue) }
            }?.id
        }
        guard let endpoint = target, let d = shared.catalog.trait(event.trait)?.event(event.event) else { return }
        var fields: [TLVElement] = []
        for (i, f) in d.fields.enumerated() {
            guard let v = event.fields[f.name] ?? event.fields[f.swiftName],
                  let tlv = ValueConversion.tlv(v, type: f.type, nullable: f.nullable)
            else { continue }
            fields.append(TLVElement(.context(UInt8(clamping: i)), tlv))
        }
        let ms = event.timestampNanoseconds > 0 ? event.timestampNanoseconds / 1_000_000 : Self.epochMilliseconds()
        node.emit(endpoint: endpoint, cluster: event.trait.rawValue, event: event.event.rawValue, priority: EventPriority(catalog: d.priority),
                  epochTimestampMs: ms, data: .structure(fields))
        dataChanged()
    }

    static func epochMilliseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return UInt64(t.tv_sec) * 1000 + UInt64(t.tv_nsec) / 1_000_000
    }

    func remove(_ layout: Layout) {
        for e in layout.endpoints.reversed() { node.removeEndpoint(e.id) }
    }

    /// Marks the clusters whose values differ between two states of a device with the same layout.
    func markChanges(from old: DeviceSnapshot?, to new: DeviceSnapshot?, _ layout: Layout) -> Bool {
        guard let new else { return false }
        var paths: [ConcreteClusterPath] = []
        let identityBefore = old.map { BridgedInfoCluster.identityValues(of: $0) }
        let reachableBefore = old.map { BridgedInfoCluster.isReachable($0) }
        if old?.name != new.name || identityBefore != BridgedInfoCluster.identityValues(of: new) || reachableBefore != BridgedInfoCluster.isReachable(new) {
            paths.append(ConcreteClusterPath(endpoint: layout.node, cluster: BridgedDeviceBasicInformation.id))
        }
        if old?.roomID != new.roomID { paths.append(ConcreteClusterPath(endpoint: layout.node, cluster: RoomLabelCluster.id)) }
        for e in layout.endpoints {
            guard let type = e.deviceType else { continue }
            let before = old?.type(type)?.traits
            let after = new.type(type)?.traits
            for c in e.clusters where before?[TraitID(c.trait)]?.attributes != after?[TraitID(c.trait)]?.attributes {
                paths.append(ConcreteClusterPath(endpoint: e.id, cluster: c.trait))
            }
            // Boolean State's StateChange (1.7.6 of the Application Cluster Specification) when
            // StateValue moves: the device reports the attribute, the bridge adds the event.
            let stateValue = AttributeID(0x0000)
            if let was = before?[TraitID(BooleanStateEvents.cluster)]?[stateValue]?.boolValue,
               let now = after?[TraitID(BooleanStateEvents.cluster)]?[stateValue]?.boolValue, was != now,
               e.clusters.contains(where: { $0.trait == BooleanStateEvents.cluster }) {
                node.emit(endpoint: e.id, cluster: BooleanStateEvents.cluster, event: BooleanStateEvents.stateChange, priority: .info,
                          epochTimestampMs: Self.epochMilliseconds(), data: .structure([TLVElement(.context(0), .bool(now))]))
            }
        }
        for p in paths { node.markChanged(p) }
        return !paths.isEmpty
    }
}

/// A device's endpoints and their clusters: what a controller caches. Equal layouts need no
/// rebuild (only value changes); a different one replaces the device's endpoints.
struct Layout: Hashable, Sendable {
    struct ClusterPlan: Hashable, Sendable {
        var trait: UInt32
        var attributes: [UInt32]
        var commands: [UInt32]
        var featureMap: UInt32
        /// The events it emits (its EventList).
        var events: [UInt32] = []
    }

    struct EndpointPlan: Hashable, Sendable {
        var id: UInt16
        var parent: UInt16
        var deviceTypes: [DeviceTypeEntry]
        /// The device type whose traits this endpoint serves (nil: the Bridged Node of a composed device).
        var deviceType: DeviceTypeID?
        var clusters: [ClusterPlan]
    }

    var node: UInt16
    var endpoints: [EndpointPlan]
    /// The identity attributes of Bridged Device Basic Information the device has.
    var identity: [UInt32]

    var placement: MatterHomeEndpoints.Placement {
        var types: [DeviceTypeID: UInt16] = [:]
        for e in endpoints { if let t = e.deviceType { types[t] = e.id } }
        return MatterHomeEndpoints.Placement(node: node, types: types)
    }

    /// The store's keys of a device's endpoints: its ID for the Bridged Node, and `ID#type` per
    /// device type when it has several.
    static func keys(of device: DeviceSnapshot) -> [String] {
        var keys = [device.id.rawValue]
        if device.types.count > 1 { keys += device.types.map { typeKey(device.id, $0.id) } }
        return keys
    }

    static func typeKey(_ device: DeviceID, _ type: DeviceTypeID) -> String { "\(device.rawValue)#\(type.hex)" }

    /// Clusters the node serves itself or the bridge adds: Descriptor, Basic Information,
    /// Bridged Device Basic Information, Fixed Label.
    static let reserved: Set<UInt32> = [0x001D, 0x0028, 0x0039, 0x0040]

    /// Nil when a number is missing (the store failed).
    init?(_ device: DeviceSnapshot, numbers: [String: UInt16], aggregator: UInt16, catalog: Catalog) {
        guard let node = numbers[device.id.rawValue] else { return nil }
        self.node = node
        identity = BridgedInfoCluster.identityValues(of: device).keys.sorted()
        let bridgedNode = DeviceTypeEntry.bridgedNode
        func entry(_ t: DeviceTypeID) -> DeviceTypeEntry {
            DeviceTypeEntry(t.rawValue, revision: UInt16(clamping: catalog.deviceType(t)?.revision ?? 1))
        }
        if device.types.count == 1, let t = device.types.first {
            endpoints = [EndpointPlan(id: node, parent: aggregator, deviceTypes: [entry(t.id), bridgedNode], deviceType: t.id,
                                      clusters: Self.clusters(t, catalog: catalog))]
        } else {
            var list = [EndpointPlan(id: node, parent: aggregator, deviceTypes: [bridgedNode], deviceType: nil, clusters: [])]
            for t in device.types {
                guard let n = numbers[Self.typeKey(device.id, t.id)] else { return nil }
                list.append(EndpointPlan(id: n, parent: node, deviceTypes: [entry(t.id)], deviceType: t.id, clusters: Self.clusters(t, catalog: catalog)))
            }
            endpoints = list
        }
    }

    /// Whether a feature conformance expression of terms joined by `&` and `|` (no
    /// parentheses; `!CODE` negates) holds for a feature map.
    static func holds(_ expression: String, _ featureMap: UInt32, _ features: [FeatureDescriptor]) -> Bool {
        guard !expression.contains("("), !expression.isEmpty else { return false }
        func has(_ code: Substring) -> Bool? {
            guard let f = features.first(where: { $0.code == code }), f.bit >= 0, f.bit < 32 else { return nil }
            return featureMap & (1 << UInt32(f.bit)) != 0
        }
        return expression.split(separator: "|").contains { any in
            any.split(separator: "&").allSatisfy { term in
                let t = term.filter { $0 != " " }
                if t.hasPrefix("!") { return has(t.dropFirst()) == false }
                return has(Substring(t)) == true
            }
        }
    }

    /// The feature map the device reports for a trait (attribute 0xFFFC), else 0.
    static func featureMapOf(_ trait: TraitState) -> UInt32 {
        if case .int(let f)? = trait.attributes[AttributeID(0xFFFC)], let v = UInt32(exactly: f) { return v }
        return 0
    }

    /// The catalogue clusters of one device type: its traits the catalogue knows, with their
    /// mandatory attributes and commands plus the attributes the device reports.
    static func clusters(_ type: DeviceTypeState, catalog: Catalog) -> [ClusterPlan] {
        var out: [ClusterPlan] = []
        for (id, trait) in type.traits.sorted(by: { $0.key < $1.key }) where !reserved.contains(id.rawValue) {
            guard let d = catalog.trait(id), !d.isVendor else { continue }
            let reported = Set(trait.attributes.keys)
            let attributes = d.attributes.filter { $0.conformance == .mandatory || reported.contains($0.id) }.map { $0.id.rawValue }
            // Mandatory commands, and those required unless a feature is on ("!OFFONLY": On and
            // Toggle of On/Off) — the feature map is 0 unless the device reports one.
            let commands = d.commands.filter {
                $0.conformance == .mandatory || ($0.conformance == .conditional && $0.conformanceExpression.hasPrefix("!") && featureMapOf(trait) == 0)
            }.map { $0.id.rawValue }
            let featureMap = featureMapOf(trait)
            // Mandatory events, those whose features the device has (Switch: "MS", "MSM & !AS"),
            // and Boolean State's StateChange, which the bridge emits itself.
            let events = d.events.filter { e in
                e.conformance == .mandatory || (e.conformance == .conditional && Self.holds(e.conformanceExpression, featureMap, d.features))
                    || (id.rawValue == BooleanStateEvents.cluster && e.id.rawValue == BooleanStateEvents.stateChange)
            }.map { $0.id.rawValue }
            out.append(ClusterPlan(trait: id.rawValue, attributes: attributes.sorted(), commands: commands.sorted(), featureMap: featureMap,
                                   events: events.sorted()))
        }
        return out
    }
}

/// Boolean State's StateChange event (cluster 0x0045, event 0x00: `StateValue` bool).
enum BooleanStateEvents {
    static let cluster: UInt32 = 0x0045
    static let stateChange: UInt32 = 0x00
}
