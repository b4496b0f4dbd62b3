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
        // (a subscription per device and a diff per change).
        // It stays until shutdown all the same: a service that returns would stop the group.
        guard logger.logLevel <= .info else {
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await watchDevices(self.home.devices(), label: "device") }
                group.addTask { await watchDevices(self.home.discoveredDevices(), label: "discovered device") }
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

    func watchDevices(_ query: Query<HomeDevice>, label: String) async {
        await withTaskGroup(of: Void.self) { group in
            var watching = Set<DeviceID>()
            for await change in query.stream() {
                var added: [HomeDevice] = []
                switch change {
                case .snapshot(let set): added = set.filter { !watching.contains($0.id) }
                case .added(let d): added = [d]
                case .updated, .removed: break
                }
                for device in added {
                    watching.insert(device.id)
                    let primary = device.snapshot.primaryType.flatMap { self.home.core.catalog.deviceType($0.id)?.name } ?? "?"
                    logger.info("\(label) '\(device.name)' (\(primary))", metadata: ["device": "\(device.id)"])
                    group.addTask { await self.watchAttributes(device.id, label: label) }
                }
            }
        }
    }

    func watchAttributes(_ id: DeviceID, label: String) async {
        var last: DeviceSnapshot?
        for await device in home.device(id: id) {
            defer { last = device.snapshot }
            guard let last else { continue }
            for change in describeChanges(from: last, to: device.snapshot) {
                logger.info("\(change)", metadata: ["device": "\(id)"])
            }
        }
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
