import HAPBridge
import HearthAPI
import HearthConfiguration
import HearthServer
import HomeCore
import HomeModel
import Logging

/// `hap:` in hearth.yaml → the HAP bridges service (a second bridge past 149 devices).
enum HAPSetup {
    static func bridge(_ config: HearthConfig, exposure: ExposureSettings, core: HomeCore, logger: Logger) throws -> HAPBridgeGroup {
        let h = config.hap
        let bridge = try HAPBridgeGroup(
            core: core, settings: exposure, statePath: config.hapStatePath,
            configuration: .init(host: h.host, port: h.port, name: h.name, setupCode: h.setupCode, advertise: h.advertise),
            logger: Logger(label: "hearth.hap"))
        logger.info("HAP bridge on", metadata: ["listen": "\(h.host):\(h.port)", "state": "\(config.hapStatePath)"])
        return bridge
    }
}

/// The HomeKit bridges as the API sees them (`/hap`).
struct HAPAdmin: HAPAdministration {
    let group: HAPBridgeGroup
    func hapBridges() -> [WireHAPBridge] { group.wireBridges() }
    func unpair(bridge number: Int) throws(HomeError) -> [String] { try group.unpair(bridge: number) }
}
