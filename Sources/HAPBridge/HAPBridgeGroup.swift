import Foundation
import HAP
public import HearthAPI
public import HomeCore
public import HomeModel
public import Logging
public import ServiceLifecycle
import Synchronization

/// Hearth's HomeKit bridges: one, and another each time 149 more devices are exposed (HAP
/// holds 150 accessories per bridge, the bridge included). Each bridge has its own port
/// (`port`, `port + 1`, …), pairing identity and setup code, mDNS name ("Hearth", "Hearth 2",
/// …) and state file (`hap.sqlite`, `hap-2.sqlite`, …). A device is placed on a bridge once,
/// kept in the first bridge's state file, and stays there across restarts; a new device goes
/// to the first bridge with room. A bridge starts when the first device is placed on it.
///
/// ```swift
/// let bridges = try HAPBridgeGroup(core: core, settings: exposure, statePath: "/var/lib/hearth/hap.sqlite",
///                                  configuration: .init(port: 51826))
/// try await bridges.run()   // in the daemon's ServiceGroup
/// ```
public final class HAPBridgeGroup: Service, Sendable {
    /// Bridges at most (8 × 149 devices); devices beyond are left out with an error naming the limit.
    public static let maxBridges = 8
    /// Devices per bridge: HAP's 150 accessories less the bridge itself.
    public static let devicesPerBridge = HAPBridge.maxAccessories - 1

    public let core: HomeCore
    public let settings: ExposureSettings
    public let statePath: String
    public let configuration: HAPBridge.Configuration
    let advertiser: (any HAPAdvertising)?
    let logger: Logger
    let placement: Placement
    let running = Mutex<[Int: HAPBridge]>([:])
    let starts: (stream: AsyncStream<HAPBridge>, continuation: AsyncStream<HAPBridge>.Continuation) = AsyncStream.makeStream()

    public init(
        core: HomeCore, settings: ExposureSettings, statePath: String, configuration: HAPBridge.Configuration, advertiser: (any HAPAdvertising)? = nil,
        logger: Logger = Logger(label: "hearth.hap")
    ) throws {
        self.core = core
        self.settings = settings
        self.statePath = statePath
        self.configuration = configuration
        self.advertiser = advertiser
        self.logger = logger
        let first = try HAPStateStore(path: statePath)
        placement = Placement(store: first)
        let bridge = try HAPBridge(
            core: core, settings: settings, store: first, configuration: configuration, index: 0, placement: placement, advertiser: advertiser, logger: logger)
        running.withLock { $0[0] = bridge }
        starts.continuation.yield(bridge)
        placement.onNeed = { [weak self] index in self?.need(index) }
    }

    /// The bridges started, first one first.
    public var bridges: [HAPBridge] { running.withLock { r in r.keys.sorted().map { r[$0]! } } }

    /// The bridges for the API and the web page: setup codes, QR codes, pairings.
    public func wireBridges() -> [WireHAPBridge] {
        bridges.map { bridge in
            let s = bridge.status
            return WireHAPBridge(
                number: s.index + 1, name: s.name, port: s.port, setupCode: s.setupCode, setupURI: s.setupURI,
                setupQR: (try? QRCode(s.setupURI, level: .medium).rows) ?? [], pairingID: s.pairingID, configurationNumber: s.configurationNumber,
                accessories: s.accessories, pairings: s.pairings.map { WireHAPPairing(identifier: $0.identifier, admin: $0.isAdmin) })
        }
    }

    /// Removes every pairing of bridge `number` (1 = the first) and ends their sessions.
    @discardableResult
    public func unpair(bridge number: Int) throws(HomeError) -> [String] {
        guard let bridge = bridges.first(where: { $0.index + 1 == number }) else {
            throw .notFound("no HomeKit bridge \(number) (\(bridges.count) running)")
        }
        return bridge.unpairAll()
    }

    /// Bridge `index` (a device was placed on it): created and started if it is not yet.
    func need(_ index: Int) {
        let created: Result<HAPBridge?, any Error> = running.withLock { r in
            if r[index] != nil { return .success(nil) }
            var c = configuration
            c.name = "\(configuration.name) \(index + 1)"
            c.port = configuration.port == 0 ? 0 : configuration.port + index
            c.setupCode = nil  // its own, generated once and kept in its state file
            do {
                let store = try HAPStateStore(path: HAPStateStore.path(bridge: index, first: statePath))
                let bridge = try HAPBridge(
                    core: core, settings: settings, store: store, configuration: c, index: index, placement: placement, advertiser: advertiser, logger: logger)
                r[index] = bridge
                return .success(bridge)
            } catch {
                return .failure(error)
            }
        }
        switch created {
        case .success(let bridge?):
            logger.notice(
                "HAP: over \(Self.devicesPerBridge * index) devices exposed: starting bridge \(index + 1)",
                metadata: ["name": "\(bridge.configuration.name)", "port": "\(bridge.configuration.port)", "setupCode": "\(bridge.identity.setupCode)"])
            starts.continuation.yield(bridge)
        case .success(nil): break
        case .failure(let error): logger.error("HAP: bridge \(index + 1) could not start: \(error)")
        }
    }

    public func run() async throws {
        let starts = self.starts
        await withDiscardingTaskGroup { group in
            await withGracefulShutdownHandler {
                await withTaskCancellationHandler {
                    for await bridge in starts.stream {
                        group.addTask { try? await bridge.run() }
                    }
                } onCancel: {
                    starts.continuation.finish()
                }
            } onGracefulShutdown: {
                starts.continuation.finish()
            }
        }
    }

    /// The bridge per device, kept in the first bridge's state file.
    final class Placement: Sendable {
        let store: HAPStateStore
        let assigned = Mutex<[String: Int]?>(nil)
        let needed = Mutex<(@Sendable (Int) -> Void)?>(nil)

        init(store: HAPStateStore) { self.store = store }

        var onNeed: (@Sendable (Int) -> Void)? {
            get { needed.withLock { $0 } }
            set { needed.withLock { $0 = newValue } }
        }

        /// Of `devices` (the exposed ones that map to HAP, sorted), those on bridge `index`,
        /// placing new ones on the first bridge with room (fewer than 149 of `devices`);
        /// `unplaced`: new ones with no room on any bridge. Starts the bridges in use.
        func devices(for index: Int, among devices: [String]) throws -> (mine: Set<String>, unplaced: [String]) {
            let (map, unplaced): ([String: Int], [String]) = try assigned.withLock { cached in
                var map = try cached ?? store.bridgeAssignments()
                var count: [Int: Int] = [:]
                for d in devices { if let b = map[d] { count[b, default: 0] += 1 } }
                var added: [String: Int] = [:]
                var unplaced: [String] = []
                for d in devices where map[d] == nil {
                    guard let b = (0..<HAPBridgeGroup.maxBridges).first(where: { count[$0, default: 0] < HAPBridgeGroup.devicesPerBridge }) else {
                        unplaced.append(d)
                        continue
                    }
                    map[d] = b
                    added[d] = b
                    count[b, default: 0] += 1
                }
                try store.saveBridgeAssignments(added)
                cached = map
                return (map, unplaced)
            }
            let inUse = Set(devices.compactMap { map[$0] })
            if let onNeed { for b in inUse.sorted() where b != index { onNeed(b) } }
            return (Set(devices.filter { map[$0] == index }), unplaced)
        }
    }
}
