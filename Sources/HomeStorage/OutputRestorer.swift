public import HomeCore
public import HomeModel
public import Logging

/// Puts outputs back as their restore-on-start setting says once their plugin reports them
/// after a start: `on`, `off`, or `last` (the On/Off value saved before the restart).
///
/// Run it (hearthd does, as a service) after ``HomeCore/restore()``. It watches the devices
/// until every output in the plan has come online, sends `On`/`Off` through the core (as the
/// `system` principal, so the plugin sees a normal command) only where the reported state
/// differs, and returns. A command that fails is logged; the others still run.
public struct OutputRestorer: Sendable {
    public let core: HomeCore
    public let plan: [DeviceID: Bool]
    let logger: Logger

    /// - Parameter plan: the wanted On/Off per device, usually ``HearthDatabase/restorePlan()``.
    public init(core: HomeCore, plan: [DeviceID: Bool], logger: Logger = Logger(label: "hearth.restore")) {
        self.core = core
        self.plan = plan
        self.logger = logger
    }

    /// What was done for each device: the command sent (true: On, false: Off), or nil when the
    /// device already was as wanted.
    public struct Outcome: Hashable, Sendable {
        public let device: DeviceID
        public let sent: Bool?
        public let error: String?

        public init(device: DeviceID, sent: Bool?, error: String?) {
            self.device = device
            self.sent = sent
            self.error = error
        }
    }

    /// Waits for the plan's devices and restores them; returns when all are handled or the
    /// task is cancelled.
    @discardableResult
    public func run() async -> [Outcome] {
        var pending = plan
        var outcomes: [Outcome] = []
        guard !pending.isEmpty else { return outcomes }
        let home = core.home(for: .system)
        logger.info("restoring \(pending.count) output(s) as they come online")
        for await set in home.devices().batched() {
            for (id, want) in pending {
                guard let device = set[id: id]?.snapshot, let type = device.onOffDeviceType,
                    device.type(type)?.traits[OnOffTrait.identifier]?.sourceConnectivity.connectivityState == .online
                else { continue }
                pending[id] = nil
                if device.onOffValue == want {
                    outcomes.append(Outcome(device: id, sent: nil, error: nil))
                    continue
                }
                let request = CommandRequest(
                    device: id, deviceType: type, trait: OnOffTrait.identifier,
                    command: want ? OnOffTrait.Command.on : OnOffTrait.Command.off)
                do {
                    _ = try await home.invoke(request)
                    logger.info("restored \(device.name) to \(want ? "on" : "off")", metadata: ["device": "\(id)"])
                    outcomes.append(Outcome(device: id, sent: want, error: nil))
                } catch {
                    logger.error("could not restore \(device.name): \(error)", metadata: ["device": "\(id)"])
                    outcomes.append(Outcome(device: id, sent: want, error: "\(error)"))
                }
            }
            if pending.isEmpty { break }
        }
        return outcomes
    }
}
