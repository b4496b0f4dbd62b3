import HomeCore
import HomeModel
import Logging
import ServiceLifecycle

/// An in-process observer that logs what happens in the home: devices appearing and going,
/// attribute changes, events. It reads the core through the public `Home` API, like any client.
struct ChangeLogger: Service {
    let home: Home
    let logger: Logger

    func run() async throws {
        // Everything it writes is at info: above that level it would only do work to throw away
        // (a diff per change).
        // It stays until shutdown all the same: a service that returns would stop the group.
        guard logger.logLevel <= .info else {
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await watchDevices() }
                group.addTask {
                    for await event in self.home.events() {
                        let trait = self.home.core.catalog.trait(event.trait)
                        let name = trait?.event(event.event)?.name ?? event.event.hex
                        logger.info(
                            "event \(trait?.name ?? event.trait.hex).\(name) \(event.fields.isEmpty ? "" : "\(event.fields)")",
                            metadata: ["device": "\(event.device)"])
                    }
                }
            }
        }
    }

    /// Logs devices appearing (discovered or commissioned) and every change of their state, from
    /// one subscription to the core's change records: one task and one table of the last logged
    /// state per device, not a task and a subscription per device (about 3.5 KB each, which a
    /// house of 1,000 MQTT devices kept for nothing above the info level's chatter).
    ///
    /// A reader that falls far behind loses the oldest records (``Home/changes()``); a device
    /// whose change is lost is still compared with the state last logged at its next change.
    func watchDevices() async {
        let changes = home.changes()
        var known: [DeviceID: DeviceSnapshot] = [:]
        // Records up to this version are already in what the lists below show.
        let seen = home.core.state.version
        let seed = ((try? await home.devices().list()) ?? []) + ((try? await home.discoveredDevices().list()) ?? [])
        for device in seed.sorted(by: { $0.id < $1.id }) {
            logAppeared(device.snapshot)
            known[device.id] = device.snapshot
        }
        for await record in changes where record.version > seen {
            for id in record.devices.keys.sorted() {
                guard let now = (try? home.currentDevice(id: id))?.snapshot else {
                    known[id] = nil
                    continue
                }
                if let last = known[id], last.commissioning == now.commissioning {
                    for change in describeChanges(from: last, to: now) {
                        logger.info("\(change)", metadata: ["device": "\(id)"])
                    }
                } else {
                    logAppeared(now)
                }
                known[id] = now
            }
        }
    }

    func logAppeared(_ device: DeviceSnapshot) {
        let label = device.commissioning == .commissioned ? "device" : "discovered device"
        let primary = device.primaryType.flatMap { self.home.core.catalog.deviceType($0.id)?.name } ?? "?"
        logger.info("\(label) '\(device.name)' (\(primary))", metadata: ["device": "\(device.id)"])
    }

    func describeChanges(from old: DeviceSnapshot, to new: DeviceSnapshot) -> [String] {
        var lines: [String] = []
        if old.sourceConnectivity.connectivityState != new.sourceConnectivity.connectivityState {
            lines.append("connectivity \(old.sourceConnectivity.connectivityState.rawValue) → \(new.sourceConnectivity.connectivityState.rawValue)")
        }
        for type in new.types {
            for (traitID, trait) in type.traits.sorted(by: { $0.key < $1.key }) {
                let before = old.type(type.id)?.traits[traitID]?.attributes ?? [:]
                let descriptor = self.home.core.catalog.trait(traitID)
                for (attributeID, value) in trait.attributes.sorted(by: { $0.key < $1.key }) where before[attributeID] != value {
                    let a = descriptor?.attribute(attributeID)
                    let unit = a?.unit.map { " (\($0))" } ?? ""
                    lines.append(
                        "\(descriptor?.name ?? traitID.hex).\(a?.name ?? attributeID.hex) = \(value)\(unit)")
                }
            }
        }
        return lines
    }
}
