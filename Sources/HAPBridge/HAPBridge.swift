import Crypto
import Foundation
import HashTreeCollections
public import HAP
public import HomeCore
public import HomeModel
public import Logging
public import ServiceLifecycle
import Synchronization

/// Hearth as a HomeKit bridge (issue 20): the bridge accessory plus one accessory per exposed
/// device, served over HAP; writes go through the core as the `exposure:hap` principal whose
/// grant follows the exposure policy shared with the other doors. A service: run it in the
/// daemon's `ServiceGroup`.
///
/// ```swift
/// let bridge = try HAPBridge(core: core, settings: exposure, store: HAPStateStore(path: "/var/lib/hearth/hap.sqlite"),
///                            configuration: .init(port: 51826))
/// try await bridge.run()
/// ```
public final class HAPBridge: Service, HAPAccessoryHandler, Sendable {
    /// HAP's limit: 150 accessories per bridge, the bridge itself included (HAP R2 2.5.3.2).
    public static let maxAccessories = 150

    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// The bridge's name (mDNS instance name, the bridge accessory's Name).
        public var name: String
        /// A fixed setup code ("XXX-XX-XXX"); nil keeps the generated one.
        public var setupCode: String?
        public var firmware: String
        /// Advertise `_hap._tcp` through avahi (`avahi-publish-service`).
        public var advertise: Bool

        public init(host: String = "0.0.0.0", port: Int = 51826, name: String = "Hearth", setupCode: String? = nil, firmware: String = "1.0.0", advertise: Bool = true) {
            self.host = host
            self.port = port
            self.name = name
            self.setupCode = setupCode
            self.firmware = firmware
            self.advertise = advertise
        }
    }

    public let core: HomeCore
    public let settings: ExposureSettings
    public let store: HAPStateStore
    public let configuration: Configuration
    public let pairing: PairingServer
    /// 0 for the first bridge; more when over 149 devices are exposed (``HAPBridgeGroup``).
    public let index: Int
    /// The controllers' sessions (to end them when unpaired here).
    public let connections = HAPConnections()
    let placement: HAPBridgeGroup.Placement?
    let advertiser: (any HAPAdvertising)?
    let logger: Logger

    struct State {
        var accessories: [Int: MappedAccessory] = [:]
        var database = AccessoryDatabase([])
        var configurationNumber = 1
        /// The first layout is built (before it, nothing is advertised: `c#` is not known).
        var layoutKnown = false
        var refused: [DeviceID] = []
        var aids: [String: Int] = [:]
        var iids: [Int: IIDAllocator] = [:]
        var port = 0
        var ready = false
    }

    let state: Mutex<State>
    let readyWaiters = Mutex<[CheckedContinuation<Int, Never>]>([])
    /// The TXT record last published (a publish happens only when it differs).
    let advertised = Mutex<[String]?>(nil)

    public convenience init(
        core: HomeCore, settings: ExposureSettings, store: HAPStateStore, configuration: Configuration, advertiser: (any HAPAdvertising)? = nil,
        logger: Logger = Logger(label: "hearth.hap")
    ) throws {
        try self.init(core: core, settings: settings, store: store, configuration: configuration, index: 0, placement: nil, advertiser: advertiser, logger: logger)
    }

    init(
        core: HomeCore, settings: ExposureSettings, store: HAPStateStore, configuration: Configuration, index: Int, placement: HAPBridgeGroup.Placement?,
        advertiser: (any HAPAdvertising)?, logger: Logger
    ) throws {
        self.core = core
        self.settings = settings
        self.store = store
        self.configuration = configuration
        self.index = index
        self.placement = placement
        self.logger = logger
        if let code = configuration.setupCode, !AccessoryIdentity.isAllowedSetupCode(code) {
            throw HomeError.invalidArgument("hap.setupCode '\(code)' is not a HAP setup code: XXX-XX-XXX digits, not all the same, not 123-45-678 or 876-54-321")
        }
        let identity = try store.identity(setupCode: configuration.setupCode)
        pairing = try PairingServer(identity: identity, store: store)
        var initial = State()
        // The number in force since the last run: unchanged unless the layout changes.
        initial.configurationNumber = try store.currentConfigurationNumber()
        state = Mutex(initial)
        self.advertiser = configuration.advertise ? (advertiser ?? Advertiser(logger: logger)) : nil
    }

    public var identity: AccessoryIdentity { pairing.identity }
    public var database: AccessoryDatabase { state.withLock { $0.database } }
    public var configurationNumber: Int { state.withLock { $0.configurationNumber } }
    /// Exposed devices left out because of the 149-device limit.
    public var refusedDevices: [DeviceID] { state.withLock { $0.refused } }

    /// The bound port once listening (waits until then).
    public func listeningPort() async -> Int {
        await withCheckedContinuation { c in
            let port: Int? = state.withLock { $0.ready ? $0.port : nil }
            if let port { c.resume(returning: port) } else {
                readyWaiters.withLock { $0.append(c) }
                if let p = state.withLock({ $0.ready ? $0.port : nil }) {
                    let waiting = readyWaiters.withLock { w in defer { w = [] }; return w }
                    for w in waiting { w.resume(returning: p) }
                }
            }
        }
    }

    /// The TXT record (HAP R2 6.4).
    public func txtRecord() -> [(String, String)] {
        let id = pairing.identity
        return [
            ("c#", String(configurationNumber)), ("ff", "0"), ("id", id.pairingID), ("md", configuration.name), ("pv", "1.1"),
            ("s#", "1"), ("sf", pairing.isPaired ? "0" : "1"), ("ci", "2"), ("sh", id.setupHash),
        ]
    }

    /// What the web page and `hearth hap` show of this bridge.
    public struct Status: Sendable, Hashable {
        public var index: Int
        public var name: String
        /// The bound port (the configured one before listening).
        public var port: Int
        public var setupCode: String
        public var setupURI: String
        public var pairingID: String
        public var configurationNumber: Int
        /// Accessories served, the bridge included.
        public var accessories: Int
        public var pairings: [Pairing]
    }

    public var status: Status {
        let (port, count, number) = state.withLock { ($0.ready ? $0.port : configuration.port, $0.accessories.count, $0.configurationNumber) }
        return Status(
            index: index, name: configuration.name, port: port, setupCode: identity.setupCode, setupURI: identity.setupURI(category: 2),
            pairingID: identity.pairingID, configurationNumber: number, accessories: count, pairings: pairing.pairings)
    }

    /// Removes every pairing and ends their sessions (the bridge can be added to Home again);
    /// `sf` is re-advertised. Returns the controllers removed.
    @discardableResult
    public func unpairAll() -> [String] {
        let removed = pairing.removeAll()
        connections.close(controllers: Set(removed))
        logger.notice("HAP bridge unpaired", metadata: ["bridge": "\(configuration.name)", "removed": "\(removed.count)"])
        return removed
    }

    public func run() async throws {
        let server = HAPServer(pairing: pairing, handler: self, host: configuration.host, port: configuration.port, connections: connections, logger: logger)
        logger.info("HAP bridge", metadata: ["name": "\(configuration.name)", "setupCode": "\(identity.setupCode)", "setupURI": "\(identity.setupURI(category: 2))", "id": "\(identity.pairingID)"])
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    do {
                        try await server.run { port in
                            self.state.withLock {
                                $0.port = port
                                $0.ready = true
                            }
                            let waiting = self.readyWaiters.withLock { w in defer { w = [] }; return w }
                            for w in waiting { w.resume(returning: port) }
                            self.readvertise()
                        }
                    } catch is CancellationError {
                    } catch {
                        self.logger.error("HAP server stopped: \(error)")
                    }
                }
                group.addTask { await self.followPolicy(server: server) }
                group.addTask { await self.watchPairings() }
            }
        }
        advertiser?.stop()
        logger.info("HAP bridge stopped", metadata: ["name": "\(configuration.name)"])
    }

    /// Re-advertises `sf` as the pairings change (pair-setup done, the last pairing removed).
    func watchPairings() async {
        for await _ in pairing.changes() {
            if Task.isCancelled { break }
            readvertise()
        }
    }

    /// Publishes the TXT record when it differs from the one published: once listening and
    /// the first layout is built, then on a `c#` or `sf` change. Under the lock, so two
    /// changes at once publish in order.
    func readvertise() {
        guard let advertiser else { return }
        guard let port = state.withLock({ $0.ready && $0.layoutKnown ? $0.port : nil }) else { return }
        advertised.withLock { last in
            let txt = txtRecord()
            let flat = txt.map { "\($0.0)=\($0.1)" }
            guard flat != last else { return }
            last = flat
            advertiser.publish(name: configuration.name, port: port, txt: txt)
        }
    }

    func followPolicy(server: HAPServer) async {
        var session: Task<Void, Never>?
        for await policy in settings.updates() {
            if Task.isCancelled { break }
            session?.cancel()
            await session?.value
            session = Task { await self.session(policy: policy, server: server) }
        }
        session?.cancel()
        await session?.value
    }

    func session(policy: ExposurePolicy, server: HAPServer) async {
        let home = core.home(for: policy.principal(door: "hap"))
        // The set (batched) and each device's new state (changedDevices) feed one loop, so
        // rebuilds never overlap.
        enum Input { case all([DeviceSnapshot]), changed([DeviceSnapshot]) }
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
                var current: [DeviceID: DeviceSnapshot] = [:]
                for await input in inputs {
                    switch input {
                    case .all(let devices): current = Dictionary(devices.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
                    case .changed(let devices): for d in devices { current[d.id] = d }
                    }
                    let exposed = current.values.compactMap { policy.view(of: $0, catalog: self.core.catalog) }
                    self.rebuild(exposed, server: server)
                }
            }
            group.addTask {
                for await event in home.events() {
                    guard event.trait == SwitchTrait.identifier else { continue }
                    let target: (CharacteristicID, Int)? = self.state.withLock { s in
                        for (aid, m) in s.accessories where m.device?.id == event.device {
                            guard let device = m.device, let press = HAPMapper.buttonPress(event, multiPress: HAPMapper.countsMultiPress(device)),
                                  let iid = m.buttons[press.button]
                            else { return nil }
                            return (CharacteristicID(aid: aid, iid: iid), press.value)
                        }
                        return nil
                    }
                    if let (cid, value) = target { server.connections.notify([(cid, .int(value))]) }
                }
            }
        }
    }

    /// Rebuilds the accessories from the exposed devices; notifies changed values; bumps `c#`
    /// when the accessory set changed.
    func rebuild(_ devices: [DeviceSnapshot], server: HAPServer) {
        let sorted = devices.sorted { $0.id.rawValue < $1.id.rawValue }
        var accessories: [Int: MappedAccessory] = [:]
        var refused: [DeviceID] = []
        // The store is read once per aid and written only for new IDs (state changes cost no SQLite write).
        var (aidCache, iidCache) = state.withLock { ($0.aids, $0.iids) }
        func iids(_ aid: Int) throws -> IIDAllocator {
            if let known = iidCache[aid] { return known }
            return IIDAllocator(try store.iids(aid: aid))
        }
        func keep(_ aid: Int, _ allocator: IIDAllocator) throws {
            try store.saveIIDs(aid: aid, allocator.added)
            iidCache[aid] = IIDAllocator(allocator.iids)
        }
        do {
            var bridgeIIDs = try iids(1)
            accessories[1] = HAPMapper.bridge(name: configuration.name, serial: identity.pairingID, firmware: configuration.firmware, iids: &bridgeIIDs)
            try keep(1, bridgeIIDs)
            var mine = sorted
            var unplaced: [DeviceID] = []
            if let placement {
                // Several bridges: the devices placed on this one (a device stays where it was placed).
                let mappable = sorted.filter(HAPMapper.maps)
                let placed = try placement.devices(for: index, among: mappable.map(\.id.rawValue))
                mine = mappable.filter { placed.mine.contains($0.id.rawValue) }
                if index == 0 { unplaced = placed.unplaced.map(DeviceID.init(rawValue:)) }
            }
            let unknown = mine.map(\.id.rawValue).filter { aidCache[$0] == nil }
            if !unknown.isEmpty { aidCache.merge(try store.aids(for: unknown)) { $1 } }
            var mapped: [MappedAccessory] = []
            for d in mine {
                guard let aid = aidCache[d.id.rawValue] else { continue }
                var allocator = try iids(aid)
                guard let m = HAPMapper.accessory(for: d, aid: aid, iids: &allocator, firmware: configuration.firmware) else { continue }
                try keep(aid, allocator)
                mapped.append(m)
            }
            let admitted = Self.admit(mapped)
            for m in admitted.kept { accessories[m.accessory.aid] = m }
            refused = admitted.refused + unplaced
        } catch {
            logger.error("HAP bridge: the state store failed: \(error)")
            return
        }
        if !refused.isEmpty {
            logger.error(
                "HAP bridge: \(refused.count) exposed devices left out: a HAP bridge holds at most \(Self.maxAccessories) accessories (the bridge and \(Self.maxAccessories - 1) devices); narrow the exposure policy",
                metadata: ["left out": "\(refused.map(\.rawValue).prefix(10).joined(separator: ","))"])
        }
        let list = accessories.keys.sorted().map { accessories[$0]!.accessory }
        let database = AccessoryDatabase(list)
        let layout = Self.layout(list)
        let number: Int
        do {
            number = try store.configurationNumber(accessorySet: layout.hash, formerly: layout.fingerprint)
        } catch {
            logger.error("HAP bridge: the state store failed: \(error)")
            return
        }
        let (changes, numberChanged): ([(CharacteristicID, HAPValue?)], Bool) = state.withLock { s in
            var changes: [(CharacteristicID, HAPValue?)] = []
            for a in list {
                for svc in a.services {
                    for c in svc.characteristics where c.notifies && c.status == .success {
                        let id = CharacteristicID(aid: a.aid, iid: c.iid)
                        if let old = s.database[id], old.value != c.value || old.status != c.status, c.value != .null {
                            changes.append((id, c.value))
                        }
                    }
                }
            }
            let changed = s.configurationNumber != number
            s.accessories = accessories
            s.database = database
            s.configurationNumber = number
            s.refused = refused
            s.aids = aidCache
            s.iids = iidCache
            s.layoutKnown = true
            return (changes, changed)
        }
        if !changes.isEmpty { server.connections.notify(changes) }
        if numberChanged {
            logger.info("HAP accessory set changed", metadata: ["bridge": "\(configuration.name)", "c#": "\(number)", "accessories": "\(list.count)"])
        }
        readvertise()
    }

    /// The accessory layout (aids, service and characteristic iids and types: what a
    /// controller caches), as text and its SHA-256, which the state file
    /// keeps to tell a real change (bump `c#`) from a restart.
    static func layout(_ accessories: [HAPAccessory]) -> (fingerprint: String, hash: String) {
        let fingerprint = accessories.map { a in
            "\(a.aid):" + a.services.map { s in "\(s.iid)/\(s.type)[" + s.characteristics.map { "\($0.iid)/\($0.type)" }.joined(separator: ",") + "]" }.joined(separator: ";")
        }.joined(separator: "|")
        let hash = SHA256.hash(data: Data(fingerprint.utf8)).map { String(format: "%02x", $0) }.joined()
        return (fingerprint, "sha256:" + hash)
    }

    /// HAP's limit applied: the devices with the lowest aids (the longest exposed) keep their
    /// place, at most ``maxAccessories`` − 1 beside the bridge; the rest are refused.
    static func admit(_ mapped: [MappedAccessory]) -> (kept: [MappedAccessory], refused: [DeviceID]) {
        let byAid = mapped.sorted { $0.accessory.aid < $1.accessory.aid }
        let room = maxAccessories - 1
        return (Array(byAid.prefix(room)), byAid.dropFirst(room).compactMap { $0.device?.id })
    }

    public func write(_ writes: [(CharacteristicID, HAPValue)], controller: String) async -> [CharacteristicID: HAPStatus] {
        let policy = settings.current
        let home = core.home(for: policy.principal(door: "hap"))
        var out: [CharacteristicID: HAPStatus] = [:]
        for (cid, value) in writes {
            let found: (CharacteristicBinding, DeviceSnapshot?)? = state.withLock { s in
                guard let m = s.accessories[cid.aid], let b = m.bindings[cid.iid] else { return nil }
                return (b, m.device)
            }
            guard let (binding, device) = found, let write = binding.write else {
                out[cid] = .readOnly
                continue
            }
            guard let device else {
                out[cid] = .success  // the bridge's Identify
                logger.info("HAP identify (bridge)", metadata: ["controller": "\(controller)"])
                continue
            }
            // The policy's room and ID rules, checked on the device now (the core enforces the grant).
            guard let now = core.state.devices[device.id], policy.view(of: now, catalog: core.catalog) != nil else {
                out[cid] = .insufficientPrivileges
                logger.warning("HAP write refused: \(device.id) is not exposed", metadata: ["controller": "\(controller)"])
                continue
            }
            guard let actions = write(value, now) else {
                out[cid] = .invalidValue
                continue
            }
            do {
                for action in actions {
                    switch action {
                    case .invoke(let request): _ = try await home.invoke(request)
                    case .write(let d, let t, let trait, let attribute, let v): try await home.write(device: d, deviceType: t, trait: trait, attribute: attribute, value: v)
                    }
                }
                out[cid] = .success
            } catch {
                let message = (error as? HomeError)?.message ?? "\(error)"
                logger.warning("HAP write failed", metadata: ["characteristic": "\(cid)", "device": "\(device.id)", "error": "\(message)"])
                if (error as? HomeError)?.code == .permissionDenied { out[cid] = .insufficientPrivileges } else { out[cid] = .unreachable }
            }
        }
        return out
    }

    public func identify() async {
        logger.info("HAP identify (unpaired bridge)")
    }
}

