import Foundation
import HAP
import HearthAPI
import HearthConfiguration
import HearthServer
import HomeCore
import HomeModel
import HomeStorage
import Logging
import MatterBridge
import MatterCommissioning
import MatterHomeModel
import MatterInteraction
import ServiceLifecycle

/// `matter:` in hearth.yaml → the Matter bridge service: one node on UDP, advertised through
/// the avahi advertiser HAP uses too.
enum MatterSetup {
    static func bridge(
        _ config: HearthConfig, exposure: ExposureSettings, database: HearthDatabase, core: HomeCore, logger: Logger
    ) throws -> MatterBridgeRunner {
        let m = config.matter
        let node = MatterNode()
        let bridge = try MatterBridgeService(
            configuration: .init(port: UInt16(m.port), deviceName: m.name, advertise: m.advertise), databasePath: config.matterStatePath,
            node: node, publisher: AvahiMatterPublisher(advertiser: DNSSDAdvertiser()), logger: Logger(label: "hearth.matter"))
        logger.info("Matter bridge on", metadata: ["udp": "\(bridge.port)", "state": "\(config.matterStatePath)"])

        // The bridged devices: every device the shared exposure setting lets out, as endpoints
        // under the Aggregator (endpoint 1), numbered from 2 and kept in the database.
        let endpoints = MatterHomeEndpoints(
            core: core, settings: exposure, node: node, aggregator: MatterBridgeService.aggregatorEndpoint,
            store: database.matterEndpointStore(), dataChanged: { [bridge] in bridge.dataChanged() },
            logger: Logger(label: "hearth.matter.bridge"))
        return MatterBridgeRunner(bridge: bridge, companions: [MatterEndpointsService(endpoints: endpoints)])
    }
}

/// The bridge (and whatever keeps its bridged endpoints current) as one service.
struct MatterBridgeRunner: Service {
    let bridge: MatterBridgeService
    let companions: [any Service]

    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await bridge.run() }
            for c in companions { group.addTask { try await c.run() } }
            // Ends with the graceful shutdown (SIGTERM) or the group's cancellation.
            group.addTask { try? await gracefulShutdown() }
            _ = try await group.next()
            group.cancelAll()
        }
    }
}

/// Keeps the bridged endpoints following the home while the bridge runs.
struct MatterEndpointsService: Service {
    let endpoints: MatterHomeEndpoints

    func run() async throws {
        endpoints.start()
        // Until the graceful shutdown or the runner's cancellation.
        try? await gracefulShutdown()
        await endpoints.stop()
    }
}

/// The shared avahi advertiser as the bridge's publisher.
struct AvahiMatterPublisher: MatterServicePublisher {
    let advertiser: DNSSDAdvertiser
    var unavailableReason: String? { advertiser.unavailableReason }
    func publish(key: String, record: DNSSDRecord) throws {
        try advertiser.publish(key: key, name: record.instanceName, type: record.serviceType, subtypes: record.subtypes, port: record.port,
                               txt: record.txt.map { ($0.key, $0.value) })
    }
    func withdraw(key: String) { advertiser.withdraw(key: key) }
}

/// The Matter bridge as the API sees it (`/matter`).
struct MatterAdmin: MatterAdministration {
    let service: MatterBridgeService

    func matterStatus() -> WireMatter {
        let s = service.status
        let window = s.windowStatus == 2 ? "basic" : s.windowStatus == 1 ? "enhanced" : "closed"
        func hex(_ v: UInt64) -> String { String(v, radix: 16, uppercase: true) }
        return WireMatter(
            manualPairingCode: s.manualPairingCode, qrPayload: s.qrPayload,
            qrRows: (try? QRCode(s.qrPayload, level: .medium).rows) ?? [], discriminator: Int(s.discriminator), port: Int(s.port), window: window,
            windowSecondsLeft: s.windowSecondsLeft,
            fabrics: s.fabrics.map {
                WireMatterFabric(index: Int($0.index), fabricID: hex($0.fabricID), nodeID: hex($0.nodeID), vendorID: Int($0.vendorID), label: $0.label)
            },
            advertisingProblem: s.advertisingProblem)
    }

    func openMatterWindow() throws(HomeError) -> WireMatter {
        do throws(MatterBridgeError) { try service.openCommissioningWindow() } catch { throw .invalidArgument(error.message) }
        return matterStatus()
    }

    func removeMatterFabric(_ index: Int) throws(HomeError) -> WireMatter {
        guard let i = UInt8(exactly: index) else { throw .notFound("no fabric \(index)") }
        do throws(MatterBridgeError) { try service.removeFabric(i) } catch { throw .notFound(error.message) }
        return matterStatus()
    }
}
