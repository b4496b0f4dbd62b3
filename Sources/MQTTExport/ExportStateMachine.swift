public import HomeModel
import Foundation

/// The exporter's logic as a pure state machine: every input returns the effects to carry out
/// (publish, subscribe, send a command, refuse), which the owner does after releasing its lock.
/// Tested without a broker or a core.
public struct ExportStateMachine: Sendable {
    public enum Effect: Sendable, Equatable {
        case publish(topic: String, payload: [UInt8], retain: Bool)
        case subscribe(String)
        /// A command from a command topic, to send through the core as the exporter.
        case invoke(CommandRequest)
        /// A command payload or topic that was refused (counted and logged, never sent).
        case refused(topic: String, reason: String)
    }

    public private(set) var mapper: ExportMapper
    var topics: ExportTopics { mapper.topics }
    /// What is exported now, by device.
    public private(set) var exported: [DeviceID: ExportedDevice] = [:]
    var bySlug: [String: DeviceID] = [:]
    /// Every config topic this node stands behind (the bridge's too).
    public private(set) var configTopics: Set<String> = []
    public private(set) var connected = false
    /// Whether the device set was received once (stale configs are only cleaned after it).
    public private(set) var hasDevices = false
    /// Configs in our namespace seen before the device set was known: judged once it is.
    var staleCandidates: Set<String> = []
    /// Refused command payloads, counted.
    public private(set) var refusedCount = 0

    public init(mapper: ExportMapper) {
        self.mapper = mapper
        configTopics = [mapper.bridgeConfig().topic]
    }

    static let online = Array("online".utf8)
    static let offline = Array("offline".utf8)

    /// The whole set of exported devices (already filtered by the exposure policy): a
    /// session's first set, or the core's fresh snapshot after this reader fell behind. Devices
    /// not in it leave; the others are published where they differ from what is out. O(n): the
    /// per-change path is ``device(_:_:)``.
    public mutating func devices(_ devices: [DeviceSnapshot]) -> [Effect] {
        var effects: [Effect] = []
        let present = Set(devices.map(\.id))
        for id in exported.keys.sorted() where !present.contains(id) {
            effects += device(id, nil)
        }
        for d in devices.sorted(by: { $0.id < $1.id }) {
            effects += device(d.id, d)
        }
        hasDevices = true
        guard connected else { return [] }
        for topic in staleCandidates.sorted() where !configTopics.contains(topic) {
            effects.append(.publish(topic: topic, payload: [], retain: true))
        }
        staleCandidates = []
        return effects
    }

    /// One device's newest state as the policy shows it, or nil when it is gone or stays home:
    /// publishes what differs from what is out (configs added or cleared when its shape
    /// changed, state, availability), or clears it when it leaves. O(1) in the number of devices.
    public mutating func device(_ id: DeviceID, _ snapshot: DeviceSnapshot?) -> [Effect] {
        let old = exported[id]
        let new = snapshot.map { mapper.export($0) }.flatMap { $0.configs.isEmpty ? nil : $0 }
        if let old {
            for c in old.configs { configTopics.remove(c.topic) }
            if bySlug[old.slug] == id { bySlug[old.slug] = nil }
        }
        exported[id] = new
        var effects: [Effect] = []
        if let new {
            for c in new.configs { configTopics.insert(c.topic) }
            if bySlug[new.slug] == nil { bySlug[new.slug] = id }
            effects = change(from: old, to: new)
        } else if let old {
            effects = removal(old)
        }
        return connected ? effects : []
    }

    /// One device's state, connectivity or shape changed (a device not exported is ignored:
    /// whether it joins is for ``device(_:_:)``).
    public mutating func updated(_ device: DeviceSnapshot) -> [Effect] {
        guard exported[device.id] != nil else { return [] }
        return self.device(device.id, device)
    }

    /// A button press or other event of an exported device.
    public func event(_ event: DeviceEvent) -> [Effect] {
        guard connected, let e = exported[event.device], let action = ExportMapper.action(for: event) else { return [] }
        return [.publish(topic: topics.action(e.slug), payload: Array(action.utf8), retain: false)]
    }

    /// The broker accepted the connection (again): announce the bridge, publish everything,
    /// then subscribe (so retained stale configs arrive after ours are in place).
    public mutating func connectedToBroker() -> [Effect] {
        connected = true
        var effects: [Effect] = [.publish(topic: topics.bridgeAvailability, payload: Self.online, retain: true)]
        effects += everything()
        effects += [.subscribe(topics.haStatus), .subscribe(topics.commands), .subscribe(topics.ownConfigs)]
        return effects
    }

    public mutating func disconnected() { connected = false }

    /// Whether controllers may send commands (the policy's ``ExposurePolicy/allowControl``).
    /// The configs change on the next ``devices(_:)`` (the device set follows every policy change).
    public mutating func allowControl(_ allowed: Bool) { mapper.allowControl = allowed }

    /// A message on a subscribed topic.
    public mutating func message(topic: String, payload: [UInt8], retained: Bool) -> [Effect] {
        if topic == topics.haStatus {
            return payload == Self.online && connected ? everything() : []
        }
        if topic.hasSuffix("/config") {
            // Our own namespace: a config we do not stand behind is stale (a device removed
            // while we were away); clear it. Empty payloads are the clearing itself.
            if payload.isEmpty {
                staleCandidates.remove(topic)
                return []
            }
            guard hasDevices else {
                staleCandidates.insert(topic)
                return []
            }
            guard !configTopics.contains(topic) else { return [] }
            return [.publish(topic: topic, payload: [], retain: true)]
        }
        if let (slug, what) = topics.parseCommand(topic) {
            return command(topic: topic, slug: slug, what: what, payload: payload)
        }
        return []
    }

    mutating func command(topic: String, slug: String, what: String, payload: [UInt8]) -> [Effect] {
        func refuse(_ reason: String) -> [Effect] {
            refusedCount += 1
            return [.refused(topic: topic, reason: reason)]
        }
        if retainedCommandGuard(payload) { return refuse("empty payload") }
        guard mapper.allowControl else { return refuse("this export is read only (exposure: allowControl is off)") }
        if what == "light" {
            guard let id = bySlug[slug], let device = exported[id] else { return refuse("no exported device '\(slug.prefix(80))'") }
            do {
                return try LightCommand.requests(payload, device: device).map { .invoke($0) }
            } catch {
                return refuse(error.reason)
            }
        }
        guard payload.count <= 64 else { return refuse("payload of \(payload.count) bytes is too long for a command") }
        guard let text = String(validating: payload, as: UTF8.self)?.trimmingCharacters(in: .whitespacesAndNewlines) else {
            return refuse("payload is not UTF-8")
        }
        guard let id = bySlug[slug], let device = exported[id] else { return refuse("no exported device '\(slug.prefix(80))'") }
        switch what {
        case "onoff":
            guard let type = device.onOffType, device.lightType == nil else { return refuse("\(id) has no On/Off switch (a light takes JSON on light/set)") }
            let command: CommandID
            switch text.uppercased() {
            case "ON": command = OnOffTrait.Command.on
            case "OFF": command = OnOffTrait.Command.off
            case "TOGGLE": command = OnOffTrait.Command.toggle
            default: return refuse("'\(text.prefix(40))' is not ON, OFF or TOGGLE")
            }
            return [.invoke(CommandRequest(device: id, deviceType: type, trait: OnOffTrait.identifier, command: command))]
        case "lock":
            guard let type = device.lockType else { return refuse("\(id) is not a lock") }
            switch text.uppercased() {
            case "LOCK": return [.invoke(CommandRequest(device: id, deviceType: type, trait: DoorLockTrait.identifier, command: DoorLockTrait.Command.lockDoor))]
            case "UNLOCK":
                return [.invoke(CommandRequest(device: id, deviceType: type, trait: DoorLockTrait.identifier, command: DoorLockTrait.Command.unlockDoor))]
            default: return refuse("'\(text.prefix(40))' is not LOCK or UNLOCK")
            }
        default:
            return refuse("unknown command topic '\(what.prefix(40))'")
        }
    }

    func retainedCommandGuard(_ payload: [UInt8]) -> Bool { payload.isEmpty }

    /// The exporter is stopping: clear nothing (configs stay so HA keeps the devices), say offline.
    public func stopping() -> [Effect] {
        connected ? [.publish(topic: topics.bridgeAvailability, payload: Self.offline, retain: true)] : []
    }

    func everything() -> [Effect] {
        let bridge = mapper.bridgeConfig()
        var effects: [Effect] = [.publish(topic: bridge.topic, payload: bridge.payload, retain: true)]
        for (_, e) in exported.sorted(by: { $0.key < $1.key }) { effects += change(from: nil, to: e) }
        return effects
    }

    func change(from old: ExportedDevice?, to new: ExportedDevice) -> [Effect] {
        var effects: [Effect] = []
        let oldConfigs = Dictionary((old?.configs ?? []).map { ($0.topic, $0.payload) }, uniquingKeysWith: { a, _ in a })
        for c in new.configs where oldConfigs[c.topic] != c.payload {
            effects.append(.publish(topic: c.topic, payload: c.payload, retain: true))
        }
        let newTopics = Set(new.configs.map(\.topic))
        for t in oldConfigs.keys.sorted() where !newTopics.contains(t) { effects.append(.publish(topic: t, payload: [], retain: true)) }
        if old?.online != new.online { effects.append(availability(new)) }
        if old?.state != new.state { effects.append(.publish(topic: topics.state(new.slug), payload: new.state, retain: true)) }
        return effects
    }

    func availability(_ e: ExportedDevice) -> Effect {
        .publish(topic: topics.availability(e.slug), payload: e.online ? Self.online : Self.offline, retain: true)
    }

    /// A device that leaves: its configs, state and availability are cleared (empty retained).
    func removal(_ e: ExportedDevice) -> [Effect] {
        e.configs.map { .publish(topic: $0.topic, payload: [], retain: true) } + [
            .publish(topic: topics.state(e.slug), payload: [], retain: true),
            .publish(topic: topics.availability(e.slug), payload: [], retain: true),
        ]
    }
}
