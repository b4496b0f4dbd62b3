import Crypto
import Foundation
import HomeStorage
public import Logging
public import MatterCommissioning
public import MatterInteraction
import MatterMessaging
public import MatterSecurity
import Synchronization

/// Hearth's Matter node: one UDP socket (port 5540 by default, IPv6 dual-stack), PASE while a
/// commissioning window is open, CASE with the fabrics' operational credentials, the
/// Interaction Model on the `MatterNode` the caller passes, endpoint 0's root-node clusters
/// wired to the commissioning state, and endpoint 1, the Aggregator bridged devices go under.
///
/// The setup passcode, discriminator and attestation identity are generated once and kept in
/// the store with the fabrics, ACL and counters, so a restart (or `kill -9`) keeps every
/// controller paired. With no fabric the first window opens at start.
///
/// ```swift
/// let node = MatterNode()
/// let bridge = try MatterBridgeService(configuration: .init(), databasePath: "/var/lib/hearth/matter.sqlite",
///                                      node: node, publisher: advertiser, logger: logger)
/// node.addEndpoint(2, deviceTypes: [.onOffLight, .bridgedNode], parent: 1, clusters: [...])  // then:
/// bridge.dataChanged()
/// try await bridge.run()       // until cancelled
/// ```
public final class MatterBridgeService: Sendable {
    /// The data model served; endpoints 0 and 1 are the bridge's, bridged devices go under 1.
    public let node: MatterNode
    /// The Aggregator's endpoint.
    public static let aggregatorEndpoint: UInt16 = 1
    let configuration: MatterBridgeConfiguration
    let udp: MatterUDPNode<ContinuousClock>
    let server: InteractionServer<ContinuousClock>
    let core: BridgeCore
    let sessions: SessionManager<ContinuousClock>
    private let secureChannel: AsyncStream<ExchangeEvent>
    private let publisher: (any MatterServicePublisher)?
    private let advertising = Mutex(Advertising())
    /// Keeps the database open as long as the service (when it opened it).
    private let database: HearthDatabase?

    struct Advertising: Sendable {
        var published: [String: DNSSDRecord] = [:]
        var commissionableInstance: String?
        var problem: String?
    }

    /// Opens (or creates) the Matter store at `databasePath` (0600) and binds the UDP port.
    /// - Throws: ``MatterBridgeError`` when the store cannot be opened or the port is taken.
    public convenience init(configuration: MatterBridgeConfiguration = .init(), databasePath: String, node: MatterNode,
                            publisher: (any MatterServicePublisher)?, logger: Logger) throws(MatterBridgeError) {
        let database: HearthDatabase
        let store: MatterStateStore
        do {
            database = try HearthDatabase(path: databasePath, extraMigrations: MatterStateStore.registerMigrations(in:))
            store = try database.matterStore()
        } catch {
            throw MatterBridgeError("cannot open the Matter state at \(databasePath): \(error)")
        }
        try self.init(configuration: configuration, store: store, node: node, publisher: publisher, logger: logger, database: database)
    }

    /// With a store the caller opened (tests).
    public convenience init(configuration: MatterBridgeConfiguration = .init(), store: any MatterStore & OnboardingStore, node: MatterNode,
                            publisher: (any MatterServicePublisher)?, logger: Logger) throws(MatterBridgeError) {
        try self.init(configuration: configuration, store: store, node: node, publisher: publisher, logger: logger, database: nil)
    }

    private init(configuration: MatterBridgeConfiguration, store: any MatterStore & OnboardingStore, node: MatterNode,
                 publisher: (any MatterServicePublisher)?, logger: Logger, database: HearthDatabase?) throws(MatterBridgeError) {
        self.configuration = configuration
        self.node = node
        self.publisher = configuration.advertise ? publisher : nil
        self.database = database
        let secrets = try MatterBridgeService.onboardingSecrets(store, logger: logger)
        let attestation: DeviceAttestationCredentials
        let verifier: Spake2pVerifier
        do {
            attestation = DeviceAttestationCredentials(
                dacKey: try P256.Signing.PrivateKey(rawRepresentation: secrets.dacKey), dacCertificate: secrets.dacCertificate,
                paiCertificate: DevelopmentAttestation.paiCertificate, certificationDeclaration: secrets.certificationDeclaration)
            verifier = try Spake2pVerifier(passcode: try SetupPasscode(secrets.passcode), salt: secrets.salt, iterations: secrets.iterations)
        } catch {
            throw MatterBridgeError("the stored Matter onboarding secrets are unusable: \(error)")
        }
        let reboots: UInt32
        let commissioning: CommissioningNode
        do {
            reboots = (try store.loadCounter("reboot-count") ?? 0) &+ 1
            try store.saveCounter("reboot-count", reboots)
            // Event numbers never go back, across restarts (7.14.2.1): the bound, in blocks.
            let block = node.eventLog.block
            let blocks = try store.loadCounter(Self.eventNumberCounter) ?? 0
            node.eventLog.persist(start: UInt64(blocks) * block) { [logger] bound in
                do throws(MatterStoreError) {
                    try store.saveCounter(Self.eventNumberCounter, UInt32(clamping: (bound + block - 1) / block))
                } catch {
                    logger.error("Matter: cannot keep the event number bound: \(error)")
                }
            }
            commissioning = try CommissioningNode(
                store: store, configuration: .init(vendorID: configuration.vendorID, productID: configuration.productID), attestation: attestation)
        } catch {
            throw MatterBridgeError("cannot load the Matter fabrics: \(error)")
        }
        let core = BridgeCore(commissioning: commissioning, onboarding: secrets, configuration: configuration,
                              rebootCount: UInt16(truncatingIfNeeded: min(reboots, 0xFFFF)), logger: logger)
        let udp: MatterUDPNode<ContinuousClock>
        do {
            udp = try MatterUDPNode(port: configuration.port)
        } catch {
            throw MatterBridgeError("cannot bind Matter's UDP port \(configuration.port): \(error)")
        }
        let server = InteractionServer(node: udp, engine: InteractionEngine(model: node, access: BridgeAccessChecker(core: core, node: node)))
        self.core = core
        self.udp = udp
        self.server = server
        let drops = DropLog(logger: logger)
        udp.onDropped { drops.record($0) }
        secureChannel = udp.events(for: .secureChannel)
        // CASE resumption records outlive a restart in the state store (when it keeps them).
        sessions = SessionManager(node: udp, server: server, core: core, onboardingVerifier: verifier,
                                  resumptionStore: store as? any ResumptionStore)
        installRootEndpoints()
    }

    /// The stored counter of the event number bound, in blocks of `EventLog.block`.
    static let eventNumberCounter = "event-number-blocks"

    /// The stored secrets, or new ones saved before first use.
    static func onboardingSecrets(_ store: any OnboardingStore, logger: Logger) throws(MatterBridgeError) -> OnboardingSecrets {
        do {
            if let stored = try store.loadOnboarding() { return stored }
            var rng = SystemRandomNumberGenerator()
            var passcode: UInt32 = 0
            for _ in 0..<100 where !SetupPasscode.isValid(passcode) { passcode = UInt32.random(in: 1...99_999_998, using: &rng) }
            let credentials = try DevelopmentAttestation.installationCredentials()
            let secrets = OnboardingSecrets(
                passcode: passcode, discriminator: UInt16.random(in: 0...0xFFF, using: &rng),
                salt: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }, iterations: 1000,
                dacKey: Array(credentials.dacKey.rawRepresentation), dacCertificate: credentials.dacCertificate,
                certificationDeclaration: credentials.certificationDeclaration)
            try store.saveOnboarding(secrets)
            logger.notice("Matter onboarding secrets generated for this installation")
            return secrets
        } catch {
            throw MatterBridgeError("cannot make or keep the Matter onboarding secrets: \(error)")
        }
    }

    private func installRootEndpoints() {
        let c = configuration
        node.addEndpoint(0, deviceTypes: [.rootNode], clusters: [
            BasicInformation.cluster(vendorName: c.vendorName, vendorID: c.vendorID, productName: c.deviceName, productID: c.productID,
                                     uniqueID: "hearth-" + SHA256.hash(data: core.onboarding.dacCertificate).prefix(8).map { String(format: "%02x", $0) }.joined()),
            AccessControlCluster(core: core),
            GeneralCommissioningCluster(core: core),
            NetworkCommissioningCluster(networkID: Array("hearth-ethernet".utf8)),
            GeneralDiagnosticsCluster(core: core),
            AdministratorCommissioningCluster(core: core),
            OperationalCredentialsCluster(core: core),
            GroupKeyManagementCluster(core: core),
        ])
        node.addEndpoint(Self.aggregatorEndpoint, deviceTypes: [.aggregator], clusters: [])
    }

    static let rootClusters: [UInt32] = [
        AccessControlCluster.clusterID, GeneralCommissioningCluster.clusterID, AdministratorCommissioningCluster.clusterID,
        OperationalCredentialsCluster.clusterID, GroupKeyManagementCluster.clusterID,
    ]

    // MARK: Public surface

    /// The UDP port bound.
    public var port: UInt16 { udp.port }

    /// Messages refused by the message layer so far (a replayed counter, a bad MIC, no such
    /// session, malformed); each kind is logged (`Matter message dropped`, at most a line a second).
    public var droppedMessages: Int { udp.droppedMessages }

    /// The onboarding payload (QR and manual code) of the installation's passcode and discriminator.
    public var onboardingPayload: QRCodePayload {
        // The stored values were checked when the service started.
        QRCodePayload(vendorID: configuration.vendorID, productID: configuration.productID, discoveryCapabilities: .onNetwork,
                      discriminator: (try? Discriminator(core.onboarding.discriminator))!, passcode: (try? SetupPasscode(core.onboarding.passcode))!)
    }

    /// Codes, window, fabrics.
    public var status: MatterBridgeStatus {
        let state = core.commissioning.snapshot
        let payload = onboardingPayload
        var left: Int?
        if let expires = state.window?.expiresAt { left = max(0, Int(ContinuousClock.now.duration(to: expires).components.seconds)) }
        return MatterBridgeStatus(
            manualPairingCode: payload.manualPairingCode.formatted, qrPayload: payload.string, discriminator: core.onboarding.discriminator,
            port: port, windowStatus: state.windowStatus.rawValue, windowSecondsLeft: left,
            fabrics: state.fabrics.fabrics.map {
                MatterFabricSummary(index: $0.index, fabricID: $0.fabricID, nodeID: $0.nodeID, vendorID: $0.vendorID, label: $0.label,
                                    compressedFabricID: $0.compressedFabricID)
            },
            sessions: core.allSessions.count, advertisingProblem: advertising.withLock { $0.problem })
    }

    /// Opens a basic commissioning window (the pairing code) for `configuration.windowTimeout`,
    /// so another ecosystem can add the bridge. Replaces a basic window that is open.
    /// - Throws: when a fail-safe is armed or an administrator's window is open.
    public func openCommissioningWindow() throws(MatterBridgeError) {
        let timeout = configuration.windowTimeout
        do throws(CommissioningError) {
            try core.run { (s: inout CommissioningState) throws(CommissioningError) in
                guard s.failSafe == nil else {
                    throw CommissioningError(.busy, "a controller is commissioning right now (fail-safe armed)")
                }
                if let w = s.window, w.status == .enhancedWindowOpen {
                    throw CommissioningError(.busy, "a controller's commissioning window is open")
                }
                s.openInitialWindow(now: .now, timeout: timeout)
            }
        } catch {
            throw MatterBridgeError(error.message)
        }
        core.logger.notice("Matter commissioning window opened", metadata: ["seconds": "\(timeout.components.seconds)"])
        logPairingCodes()
    }

    /// Removes a fabric (its ACL entries and keys) and ends its sessions.
    public func removeFabric(_ index: UInt8) throws(MatterBridgeError) {
        let response: NOCResponse
        do throws(CommissioningError) {
            response = try core.run { (s: inout CommissioningState) throws(CommissioningError) in s.removeFabric(index) }
        } catch {
            throw MatterBridgeError(error.message)
        }
        guard response.statusCode == .ok else { throw MatterBridgeError("no fabric \(index)") }
        core.logger.notice("Matter fabric removed", metadata: ["fabric": "\(index)"])
    }

    /// CASE sessions resumed with Sigma2_Resume since start (also after a restart: the
    /// resumption records are kept in the state store).
    public var resumedSessions: Int { core.resumedSessions }

    /// Call after values behind bridged clusters changed (with `node.markChanged`), so
    /// subscriptions report. Endpoints added or removed are noticed without it.
    public func dataChanged() { server.dataChanged() }

    /// Prints the pairing code and QR payload to the log.
    public func logPairingCodes() {
        let payload = onboardingPayload
        core.logger.notice(
            "Matter pairing code \(payload.manualPairingCode.formatted)  QR \(payload.string)",
            metadata: ["discriminator": "\(core.onboarding.discriminator)", "port": "\(port)"])
    }

    /// Serves until the task is cancelled; then withdraws the DNS-SD records.
    public func run() async {
        if core.commissioning.snapshot.fabrics.fabrics.isEmpty {
            let timeout = configuration.windowTimeout
            _ = try? core.run { (s: inout CommissioningState) throws(CommissioningError) in s.openInitialWindow(now: .now, timeout: timeout) }
            core.logger.notice("Matter bridge not commissioned yet: commissioning window open",
                               metadata: ["minutes": "\(timeout.components.seconds / 60)"])
            logPairingCodes()
        }
        core.resync()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.udp.run() }
            group.addTask { await self.server.run() }
            group.addTask { await self.sessions.run(self.secureChannel) }
            group.addTask { await self.resyncLoop() }
            group.addTask { await self.timerLoop() }
            while !Task.isCancelled, await group.next() != nil {}
            group.cancelAll()
        }
        core.finish()
        for key in advertising.withLock({ Array($0.published.keys) }) { publisher?.withdraw(key: key) }
        advertising.withLock { $0.published = [:] }
    }

    // MARK: Time and resync

    private func timerLoop() async {
        var lastDescriptorVersion = node.clusterInfo(.init(endpoint: 0, cluster: DescriptorCluster.id))?.dataVersion
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            if let due = core.commissioning.snapshot.nextDeadline, due <= .now {
                _ = try? core.run { (s: inout CommissioningState) throws(CommissioningError) in s.tick(now: .now) }
            }
            // Endpoints added or removed (bridged devices) move the root Descriptor's version.
            let version = node.clusterInfo(.init(endpoint: 0, cluster: DescriptorCluster.id))?.dataVersion
            if version != lastDescriptorVersion {
                lastDescriptorVersion = version
                server.dataChanged()
            }
        }
    }

    private func resyncLoop() async {
        var last: CommissioningState?
        for await events in core.signals {
            if Task.isCancelled { break }
            for event in events {
                switch event {
                case .failSafeExpired(let sessionID):
                    core.logger.notice("Matter fail-safe expired: what it guarded was rolled back")
                    if core.session(sessionID)?.kind == .pase { sessions.closeSession(sessionID) }
                case .fabricRemoved(let index):
                    // Let the NOCResponse on the fabric's own session go out first.
                    try? await Task.sleep(for: .milliseconds(500))
                    for (id, record) in core.allSessions where record.kind == .case && record.fabricIndex == index { sessions.closeSession(id) }
                case .windowOpened: core.logger.info("Matter commissioning window open")
                case .windowClosed: core.logger.info("Matter commissioning window closed")
                default: break
                }
            }
            let state = core.commissioning.snapshot
            reconcileAdvertisements(state)
            // A removed (or rolled-back) fabric's peers can no longer resume their sessions.
            if last.map({ $0.fabrics.fabrics.map(\.index) != state.fabrics.fabrics.map(\.index) }) ?? true {
                sessions.forgetResumptions(keeping: Set(state.fabrics.fabrics.map(\.index)))
            }
            if last.map({ Self.differs($0, state) }) ?? true {
                for cluster in Self.rootClusters { node.markChanged(.init(endpoint: 0, cluster: cluster)) }
                server.dataChanged()
            }
            last = state
        }
    }

    static func differs(_ a: CommissioningState, _ b: CommissioningState) -> Bool {
        a.persistent != b.persistent || a.window != b.window || a.failSafe != b.failSafe || a.breadcrumb != b.breadcrumb
            || a.regulatoryConfig != b.regulatoryConfig
    }

    /// Publishes what should be published and withdraws the rest.
    private func reconcileAdvertisements(_ state: CommissioningState) {
        guard let publisher else { return }
        var desired: [String: DNSSDRecord] = [:]
        let instance: String? = advertising.withLock { a in
            if state.window == nil { a.commissionableInstance = nil } else if a.commissionableInstance == nil {
                var rng = SystemRandomNumberGenerator()
                a.commissionableInstance = MatterAdvertisement.randomInstanceName(using: &rng)
            }
            return a.commissionableInstance
        }
        if let window = state.window, let instance {
            var discriminator = core.onboarding.discriminator
            if case .enhanced(_, _, _, let d) = window.method { discriminator = d }
            desired["matterc"] = MatterAdvertisement.commissionable(
                .init(discriminator: discriminator, vendorID: configuration.vendorID, productID: configuration.productID,
                      commissioningMode: window.commissioningMode, deviceType: 0x000E, deviceName: configuration.deviceName),
                instanceName: instance, port: port)
        }
        for fabric in state.fabrics.fabrics { desired["matter-\(fabric.index)"] = MatterAdvertisement.operational(fabric, port: port) }
        let published = advertising.withLock { $0.published }
        for key in published.keys where desired[key] == nil { publisher.withdraw(key: key) }
        var problem: String?
        var now: [String: DNSSDRecord] = [:]
        for (key, record) in desired.sorted(by: { $0.key < $1.key }) {
            if published[key] == record { now[key] = record; continue }
            do {
                try publisher.publish(key: key, record: record)
                now[key] = record
            } catch {
                problem = "\(error)"
            }
        }
        let previous = advertising.withLock { a in
            defer { a.published = now; a.problem = problem }
            return a.problem
        }
        if let problem, problem != previous {
            core.logger.error("Matter DNS-SD records not published: controllers cannot find the bridge: \(problem)")
        }
    }
}

/// The message layer's refusals in the log: at most one line a second, saying how many more
/// there were since the last (a flood of hostile datagrams costs one line a second).
final class DropLog: Sendable {
    let logger: Logger
    private let state = Mutex<(last: ContinuousClock.Instant?, suppressed: Int)>((nil, 0))

    init(logger: Logger) { self.logger = logger }

    func record(_ reason: String) {
        let now = ContinuousClock.now
        let suppressed: Int? = state.withLock { s in
            if let last = s.last, now - last < .seconds(1) {
                s.suppressed += 1
                return nil
            }
            defer { s = (now, 0) }
            return s.suppressed
        }
        guard let suppressed else { return }
        logger.info("Matter message dropped", metadata: ["reason": "\(reason)", "moreSinceLastLine": "\(suppressed)"])
    }
}
