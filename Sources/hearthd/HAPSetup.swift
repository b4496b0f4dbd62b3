import HAPBridge
import HearthConfiguration
import HomeCore
import Logging

/// `hap:` in hearth.yaml → the HAP bridge service.
enum HAPSetup {
    static func bridge(_ config: HearthConfig, exposure: ExposureSettings, core: HomeCore, logger: Logger) throws -> HAPBridge {
        let h = config.hap
        let store = try HAPStateStore(path: config.hapStatePath)
        let bridge = try HAPBridge(
            core: core, settings: exposure, store: store,
            configuration: .init(host: h.host, port: h.port, name: h.name, setupCode: h.setupCode, advertise: h.advertise),
            logger: Logger(label: "hearth.hap"))
        logger.info("HAP bridge on", metadata: ["listen": "\(h.host):\(h.port)", "state": "\(config.hapStatePath)"])
        return bridge
    }
}
