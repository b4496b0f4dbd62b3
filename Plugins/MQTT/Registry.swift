import DriverAPI
import HomeModel

/// The plugin's pure state machine: which entities exist, which devices they form, which
/// topics route to them, what is available. Every input returns the effects to carry out
/// (publish a device, report values, subscribe a topic, log a line); nothing here does I/O,
/// so it is tested without a broker.
struct Registry {
    /// Something the plugin must do after an input.
    enum Effect: Hashable, Sendable {
        case publish(DeviceDescription)
        case remove(String)
        case report([AttributeReport])
        case emit(EventReport)
        case connectivity(ConnectivityState, device: String?)
        /// The connectivity of one trait of one device type (an entity of a device that is
        /// partly online).
        case traitConnectivity(ConnectivityState, device: String, trait: TraitID, deviceType: DeviceTypeID)
        case log(LogLevel, String, device: String?)
        case subscribe(String, qos: Int32)
        case unsubscribe(String)
        /// Adds one to a plugin counter (served at `/metrics` as `hearth_mqtt_<name>_total`).
        case count(String)
    }

    struct Settings: Sendable {
        var discoveryPrefix: String? = "homeassistant"
        /// Node IDs whose discovery configs are skipped: this Hearth's own MQTT export, so it
        /// never imports its own devices (`discovery.ignoreNodes`).
        var ignoredNodes: Set<String> = []
        /// Payloads larger than this are refused (counted, logged once per entity).
        var maximumPayloadBytes = 256 * 1024
        /// Discovered entities and devices beyond these are refused (counted, logged): MQTT input
        /// must not grow the plugin's memory without bound.
        var maximumEntities = 4096
        var maximumDevices = 1024
        /// Refused discovery topics whose reason is remembered (so a repeat is neither compiled
        /// nor logged again); beyond it, refusals are counted, not remembered.
        var maximumRefusedRemembered = 1024
    }

    /// What is remembered of a discovery payload: enough to recognise a repeat, not its bytes.
    struct PayloadDigest: Hashable {
        let count: Int
        let hash: Int
        init(_ bytes: [UInt8]) {
            var hasher = Hasher()
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            count = bytes.count
            hash = hasher.finalize()
        }
    }

    let settings: Settings
    private(set) var entities: [String: Entity] = [:]
    /// Where each entity landed: its device's local ID.
    private(set) var placement: [String: String] = [:]
    /// Entity keys by device local ID.
    private(set) var devices: [String: [String]] = [:]
    /// Entity keys by topic they listen to (state or availability).
    private(set) var routes: [String: [String]] = [:]
    /// The digest of the discovery payload last compiled, by entity key (a repeat is ignored).
    private var discoveryPayloads: [String: PayloadDigest] = [:]
    /// Route keys with wildcards (`+`, `#`): a message is matched against each.
    private var wildcardRoutes: Set<String> = []
    /// Switch positions held in a long press (`device|position`): their release is a LongRelease.
    private var longPressed: Set<String> = []
    /// Whether the line saying that refusals are no longer remembered was logged.
    private var refusedOverflowLogged = false
    /// Why a discovery message was refused, by its topic key (logged when the reason changes).
    private var refusedDiscovery: [String: String] = [:]
    /// Availability by entity, by topic.
    private var availability: [String: [String: Bool]] = [:]
    private var latestAvailability: [String: Bool] = [:]
    /// What each device last reported, for commands that depend on it.
    private(set) var values: [String: [TraitID: [AttributeID: Value]]] = [:]
    /// Connectivity last told to the host, by device.
    private var told: [String: ConnectivityState] = [:]
    /// Connectivity last told to the host per trait, for a device that is partly online.
    private var toldTraits: [String: [TraitSlot: ConnectivityState]] = [:]
    /// Devices published to the host, with the traits their description carries.
    private var published: Set<String> = []
    private var publishedTraits: [String: Set<TraitID>] = [:]
    /// Traits a device gained from its entities' `json_attributes_topic` (a battery level on a
    /// sensor whose device has no battery entity), added to its primary type.
    private var attributeTraits: [String: Set<TraitID>] = [:]
    /// The traits a `json_attributes_topic` value may add to a device.
    static let traitsFromAttributes: Set<TraitID> = [PowerSourceTrait.identifier, WiFiNetworkDiagnosticsTrait.identifier]
    private(set) var connected = false
    /// Connections made so far (every one after the first is a reconnect).
    private(set) var connections = 0
    /// Refused payloads by entity key.
    private(set) var malformed: [String: Int] = [:]

    init(settings: Settings = Settings()) { self.settings = settings }

    var discoveryTopic: String? { settings.discoveryPrefix.map { $0 + "/#" } }

    // MARK: Entities

    /// Adds (or replaces) an entity and returns the effects: publish its device, subscribe its topics.
    mutating func add(_ entity: Entity) -> [Effect] {
        var effects: [Effect] = []
        var touched: Set<String> = []
        if entities[entity.key] != nil {
            let (e, t) = detach(entity.key)
            effects += e
            touched.formUnion(t)
        }
        // A device can carry each device type once; a second entity of the same type (the
        // second relay of a two-channel switch) becomes a device of its own.
        // Entities that merge (a remote's triggers, a meter's power and energy) share the type
        // unless they measure the same quantity.
        var deviceID = entity.deviceID
        if let type = entity.deviceType,
            devices[deviceID]?.compactMap({ entities[$0] }).contains(where: {
                $0.deviceType == type
                    && !($0.mergesWithSameType && entity.mergesWithSameType && ($0.measures == nil || $0.measures != entity.measures))
            }) == true
        {
            deviceID = entity.deviceID + "/" + (entity.key.split(separator: "/").last.map(String.init) ?? entity.key)
        }
        entities[entity.key] = entity
        placement[entity.key] = deviceID
        devices[deviceID, default: []].append(entity.key)
        for topic in entity.topics {
            if routes[topic] == nil {
                effects.append(.subscribe(topic, qos: entity.qos))
                if MQTTTopic.hasWildcard(topic) { wildcardRoutes.insert(topic) }
            }
            routes[topic, default: []].append(entity.key)
        }
        for (trait, attributes) in entity.traits {
            for (attribute, value) in attributes where !value.isNull {
                values[deviceID, default: [:]][trait, default: [:]][attribute] = value
            }
        }
        touched.insert(deviceID)
        for device in touched.sorted() { effects += describe(device) }
        // After describing, so the line names the device once the host knows it.
        for problem in entity.problems {
            effects.append(.log(.warning, "entity \(entity.key): \(problem); that part of the entity is ignored", device: publishedDevice(of: entity.key)))
        }
        return effects
    }

    /// The device an entity forms, once it is published to the host (log lines name it).
    func publishedDevice(of key: String) -> String? {
        placement[key].flatMap { published.contains($0) ? $0 : nil }
    }

    /// Removes an entity (an empty discovery payload).
    mutating func remove(entity key: String) -> [Effect] {
        discoveryPayloads[key] = nil
        refusedDiscovery[key] = nil
        malformed[key] = nil
        guard entities[key] != nil else { return [] }
        let (effects, touched) = detach(key)
        return effects + touched.sorted().flatMap { describe($0) }
    }

    private mutating func detach(_ key: String) -> ([Effect], Set<String>) {
        guard let entity = entities.removeValue(forKey: key), let device = placement.removeValue(forKey: key) else { return ([], []) }
        var effects: [Effect] = []
        devices[device]?.removeAll { $0 == key }
        for topic in entity.topics {
            routes[topic]?.removeAll { $0 == key }
            if routes[topic]?.isEmpty == true {
                routes[topic] = nil
                wildcardRoutes.remove(topic)
                effects.append(.unsubscribe(topic))
            }
        }
        availability[key] = nil
        latestAvailability[key] = nil
        return (effects, [device])
    }

    /// The effects that bring the host's view of a device up to date.
    private mutating func describe(_ device: String) -> [Effect] {
        guard let description = description(of: device) else {
            if devices[device]?.isEmpty ?? true { devices[device] = nil }
            attributeTraits[device] = nil
            if published.remove(device) != nil {
                told[device] = nil
                toldTraits[device] = nil
                publishedTraits[device] = nil
                values[device] = nil
                return [.remove(device)]
            }
            return []
        }
        published.insert(device)
        publishedTraits[device] = Set(description.types.flatMap { $0.traits.keys })
        told[device] = nil  // state the connectivity after every (re)publish
        toldTraits[device] = nil
        return [.publish(description)] + connectivityEffects(for: [device])
    }

    /// The description of a device, from its entities; nil when none of them brings a device type.
    func description(of device: String) -> DeviceDescription? {
        let members = (devices[device] ?? []).compactMap { entities[$0] }.sorted { ($0.rank, $0.key) < ($1.rank, $1.key) }
        guard let primary = members.first(where: { $0.deviceType != nil }) else { return nil }
        var types: [DeviceTypeDescription] = []
        var switchPositions: [DeviceTypeID: Int] = [:]
        for entity in members {
            guard let type = entity.deviceType else { continue }
            if let i = types.firstIndex(where: { $0.id == type }) {
                types[i].traits.merge(entity.traits) { old, new in old.merging(new) { a, _ in a } }
            } else {
                types.append(DeviceTypeDescription(id: type, isPrimary: types.isEmpty, traits: entity.traits))
            }
            if let p = entity.switchPosition { switchPositions[type] = max(switchPositions[type] ?? 1, p) }
        }
        for entity in members where entity.deviceType == nil {
            types[0].traits.merge(entity.traits) { old, new in old.merging(new) { a, _ in a } }
        }
        for trait in (attributeTraits[device] ?? []).sorted(by: { $0.rawValue < $1.rawValue })
        where !types.contains(where: { $0.traits[trait] != nil }) {
            types[0].traits[trait] = [:]
        }
        for (type, highest) in switchPositions {
            guard let i = types.firstIndex(where: { $0.id == type }) else { continue }
            types[i].traits[SwitchTrait.identifier]?[SwitchTrait.Attribute.numberOfPositions] = .int(Int64(max(2, highest + 1)))
        }
        let splitOff = device != primary.deviceID
        var name = primary.deviceName
        if splitOff, let entityName = primary.entityName, !entityName.isEmpty { name += " " + entityName }
        return DeviceDescription(
            localID: device, name: name, manufacturer: primary.manufacturer, model: primary.model, types: types,
            locality: .local, commission: primary.commission, optimistic: members.contains { $0.optimistic },
            identity: primary.identity ?? members.lazy.compactMap(\.identity).first,
            suggestedRoom: primary.suggestedArea ?? members.lazy.compactMap(\.suggestedArea).first)
    }

    // MARK: Messages

    /// Handles a message from the broker.
    mutating func receive(_ message: Message) -> [Effect] {
        if let prefix = settings.discoveryPrefix, let topic = Discovery.parseTopic(message.topic, prefix: prefix) {
            if let node = topic.nodeID, settings.ignoredNodes.contains(node) { return [] }
            return discovery(topic, message)
        }
        let keys = routedKeys(message.topic)
        if keys.isEmpty { return [] }
        if message.payload.count > settings.maximumPayloadBytes {
            return keys.flatMap {
                refused($0, topic: message.topic, "payload of \(message.payload.count) bytes exceeds the \(settings.maximumPayloadBytes)-byte limit")
            }
        }
        if !message.isValidUTF8 {
            return keys.flatMap { refused($0, topic: message.topic, "the payload is not valid UTF-8") }
        }
        var effects: [Effect] = []
        var availabilityChanged: Set<String> = []
        for key in keys {
            guard let entity = entities[key], let device = placement[key] else { continue }
            for availabilityTopic in entity.availability where Self.covers(availabilityTopic.topic, message.topic) {
                switch Self.availabilityState(availabilityTopic, message) {
                case .success(let available):
                    availability[key, default: [:]][availabilityTopic.topic] = available
                    latestAvailability[key] = available
                    availabilityChanged.insert(device)
                case .failure(let error):
                    effects += refused(key, topic: message.topic, error.message)
                }
            }
            for subscription in entity.subscriptions where Self.covers(subscription.topic, message.topic) {
                do throws(PayloadError) {
                    let updates = try subscription.read(message)
                    let applied = apply(updates, entity: entity, device: device)
                    if effects.isEmpty { effects = applied } else { effects += applied }
                } catch {
                    effects += refused(key, topic: message.topic, error.message)
                }
            }
        }
        if !availabilityChanged.isEmpty { effects += connectivityEffects(for: availabilityChanged.sorted()) }
        return effects
    }

    /// The entities a message reaches: those of its topic and of every wildcard filter that
    /// matches it, each once.
    func routedKeys(_ topic: String) -> [String] {
        var keys = routes[topic] ?? []
        guard !wildcardRoutes.isEmpty else { return keys }
        for filter in wildcardRoutes.sorted() where MQTTTopic.matches(filter: filter, topic: topic) {
            for key in routes[filter] ?? [] where !keys.contains(key) { keys.append(key) }
        }
        return keys
    }

    /// Whether a subscription's topic (a name or a filter) takes a message on `topic`.
    static func covers(_ filter: String, _ topic: String) -> Bool {
        filter == topic || (MQTTTopic.hasWildcard(filter) && MQTTTopic.matches(filter: filter, topic: topic))
    }

    static func availabilityState(_ a: AvailabilityTopic, _ message: Message) -> Result<Bool, PayloadError> {
        var text = message.text
        if let template = a.template {
            do throws(TemplateError) {
                text = try template.render(message.variables).templateText
            } catch {
                return .failure(PayloadError("availability value_template: \(error.message)"))
            }
        }
        if text == a.available { return .success(true) }
        if text == a.notAvailable { return .success(false) }
        return .failure(PayloadError("availability '\(text.prefix(40))' is neither '\(a.available)' nor '\(a.notAvailable)'"))
    }

    /// Turns updates into reports and events for the host, remembering the values.
    mutating func apply(_ updates: [Update], entity: Entity, device: String) -> [Effect] {
        var reports: [AttributeReport] = []
        var effects: [Effect] = []
        var described: [Effect] = []
        for update in updates {
            switch update {
            case .attribute(let trait, let attribute, let value):
                // A battery level or Wi-Fi signal in the attributes of an entity whose device has
                // no such trait yet: the device gains it (described again before the report).
                var carried = publishedTraits[device]?.contains(trait) == true
                if !carried, published.contains(device), Self.traitsFromAttributes.contains(trait) {
                    attributeTraits[device, default: []].insert(trait)
                    described += describe(device)
                    carried = publishedTraits[device]?.contains(trait) == true
                }
                // Any other value for a trait the device does not carry has nowhere to go.
                guard carried else { continue }
                values[device, default: [:]][trait, default: [:]][attribute] = value
                let type = entity.traits[trait] != nil ? entity.deviceType : nil
                reports.append(AttributeReport(localID: device, deviceType: type, trait: trait, attribute: attribute, value: value))
            case .event(let trait, var event, let fields):
                if trait == SwitchTrait.identifier, let position = fields["NewPosition"] {
                    values[device, default: [:]][trait, default: [:]][SwitchTrait.Attribute.currentPosition] = position
                }
                if trait == SwitchTrait.identifier {
                    // Matter's Switch sequences (§1.13.7): a release that ends a long press is a
                    // LongRelease, whatever the firmware calls it (zigbee2mqtt's `release`).
                    let held = "\(device)|\((fields["NewPosition"] ?? fields["PreviousPosition"] ?? .null).templateText)"
                    switch event {
                    case SwitchTrait.Event.longPress: longPressed.insert(held)
                    case SwitchTrait.Event.shortRelease where longPressed.remove(held) != nil: event = SwitchTrait.Event.longRelease
                    case SwitchTrait.Event.initialPress, SwitchTrait.Event.longRelease, SwitchTrait.Event.multiPressComplete:
                        longPressed.remove(held)
                    default: break
                    }
                }
                effects.append(.emit(EventReport(localID: device, deviceType: entity.deviceType, trait: trait, event: event, fields: fields)))
            case .available(let available):
                latestAvailability[entity.key] = available
            }
        }
        guard published.contains(device) else { return [] }
        // Appended in place: the common message (one value, nothing described, no event)
        // makes one array.
        var out = described
        if !reports.isEmpty { out.append(.report(reports)) }
        out += effects
        return out
    }

    /// Counts a refused payload; logs the first one of each entity.
    mutating func refused(_ key: String, topic: String, _ reason: String) -> [Effect] {
        malformed[key, default: 0] += 1
        guard malformed[key] == 1 else { return [.count("malformed_payloads")] }
        return [
            .count("malformed_payloads"),
            .log(.warning, "entity \(key): refused payload on \(topic): \(reason) (the last good state is kept; later bad payloads of this entity are counted, not logged)",
                device: publishedDevice(of: key))
        ]
    }

    mutating func discovery(_ topic: Discovery.Topic, _ message: Message) -> [Effect] {
        let key = topic.key
        if message.payload.isEmpty {
            return remove(entity: key)
        }
        let digest = PayloadDigest(message.payload)
        if discoveryPayloads[key] == digest { return [] }
        func refuse(_ reason: String, limit: Bool = false) -> [Effect] {
            let removal = entities[key] != nil ? remove(entity: key) : []
            var counts: [Effect] = [.count("refused_discovery_payloads")]
            if limit { counts.append(.count("discovery_limit_reached")) }
            // Remembered in short: a reason can quote a template of many kilobytes.
            let reason = reason.count > 300 ? String(reason.prefix(300)) + "…" : reason
            guard refusedDiscovery[key] != nil || refusedDiscovery.count < settings.maximumRefusedRemembered else {
                guard !refusedOverflowLogged else { return removal + counts }
                refusedOverflowLogged = true
                return removal + counts + [
                    .log(.warning, "discovery \(message.topic): \(reason); the entity is ignored (\(settings.maximumRefusedRemembered) refused discovery topics are remembered; later refusals are counted, not logged)", device: nil)
                ]
            }
            discoveryPayloads[key] = digest
            guard refusedDiscovery[key] != reason else { return removal + counts }
            refusedDiscovery[key] = reason
            return removal + counts + [.log(.warning, "discovery \(message.topic): \(reason); the entity is ignored", device: nil)]
        }
        guard message.payload.count <= settings.maximumPayloadBytes else {
            return refuse("payload of \(message.payload.count) bytes exceeds the \(settings.maximumPayloadBytes)-byte limit")
        }
        let object: [String: Value]
        switch message.json {
        case .success(.object(let o)): object = o
        case .success(let other): return refuse("expected a JSON object, got \(other.kindName)")
        case .failure(let f): return refuse("the payload is \(f)")
        }
        var mapper = ComponentMapper(topic: topic, config: Discovery.normalise(object))
        do throws(ComponentError) {
            let entity = try mapper.entity()
            if entities[key] == nil, entities.count >= settings.maximumEntities {
                return refuse("the limit of \(settings.maximumEntities) discovered entities is reached", limit: true)
            }
            if devices[entity.deviceID] == nil, devices.count >= settings.maximumDevices {
                return refuse("the limit of \(settings.maximumDevices) devices is reached", limit: true)
            }
            refusedDiscovery[key] = nil
            discoveryPayloads[key] = digest
            return add(entity)
        } catch {
            return refuse(([error.message] + mapper.problems).joined(separator: "; "))
        }
    }

    // MARK: Connection and availability

    /// The broker connection is up: subscribe everything, recompute connectivity.
    mutating func connectionUp() -> [Effect] {
        connected = true
        var effects: [Effect] = connections > 0 ? [.count("reconnects")] : []
        connections += 1
        if let d = discoveryTopic { effects.append(.subscribe(d, qos: 1)) }
        for topic in routes.keys.sorted() {
            let qos = routes[topic]!.compactMap { entities[$0]?.qos }.max() ?? 1
            effects.append(.subscribe(topic, qos: qos))
        }
        return effects + connectivityEffects(for: published.sorted())
    }

    /// The broker connection is down: every device of the plugin is offline, and stays offline
    /// after reconnecting until its availability topic says otherwise (retained availability
    /// messages restate it at once).
    mutating func connectionDown() -> [Effect] {
        connected = false
        for (key, entity) in entities where !entity.availability.isEmpty {
            for a in entity.availability { availability[key, default: [:]][a.topic] = false }
            latestAvailability[key] = false
        }
        for device in published {
            told[device] = .offline
            toldTraits[device] = nil
        }
        return [.connectivity(.offline, device: nil)]
    }

    /// An entity's availability: online, offline or nil (not known yet).
    func entityAvailability(_ key: String) -> Bool? {
        guard connected, let entity = entities[key] else { return false }
        if entity.availability.isEmpty { return true }
        let states = entity.availability.map { availability[key]?[$0.topic] }
        switch entity.availabilityMode {
        case .latest: return latestAvailability[key]
        case .all:
            if states.contains(false) { return false }
            return states.allSatisfy { $0 == true } ? true : nil
        case .any:
            if states.contains(true) { return true }
            return states.allSatisfy { $0 == false } ? false : nil
        }
    }

    /// A device's connectivity from its entities': all online → online, all offline →
    /// offline, some of each → partiallyOnline, nothing known → unknown.
    func connectivity(of device: String) -> ConnectivityState {
        let states = (devices[device] ?? []).compactMap { entityAvailability($0) }
        if states.isEmpty { return .unknown }
        if states.allSatisfy({ $0 }) { return .online }
        if states.allSatisfy({ !$0 }) { return .offline }
        return .partiallyOnline
    }

    /// One trait of one device type of a device.
    struct TraitSlot: Hashable, Comparable {
        let type: DeviceTypeID
        let trait: TraitID
        static func < (a: Self, b: Self) -> Bool { (a.type, a.trait) < (b.type, b.trait) }
    }

    /// Each trait's connectivity from the entities that bring it (an entity without a device
    /// type adds its traits to the primary type), as ``connectivity(of:)`` aggregates them.
    func traitConnectivity(of device: String) -> [TraitSlot: ConnectivityState] {
        let members = (devices[device] ?? []).compactMap { entities[$0] }.sorted { ($0.rank, $0.key) < ($1.rank, $1.key) }
        guard let primary = members.first(where: { $0.deviceType != nil })?.deviceType else { return [:] }
        var states: [TraitSlot: [Bool]] = [:]
        for entity in members {
            let type = entity.deviceType ?? primary
            let state = entityAvailability(entity.key)
            for trait in entity.traits.keys {
                states[TraitSlot(type: type, trait: trait), default: []] += state.map { [$0] } ?? []
            }
        }
        return states.mapValues { known in
            if known.isEmpty { return .unknown }
            if known.allSatisfy({ $0 }) { return .online }
            if known.allSatisfy({ !$0 }) { return .offline }
            return .partiallyOnline
        }
    }

    /// Tells the host what changed: the whole device when its entities agree, else each trait
    /// (one dead entity makes its traits offline and the device type partially online).
    private mutating func connectivityEffects(for devices: [String]) -> [Effect] {
        var effects: [Effect] = []
        for device in devices where published.contains(device) {
            let state = connectivity(of: device)
            guard state == .partiallyOnline else {
                if told[device] != state || toldTraits[device] != nil {
                    told[device] = state
                    toldTraits[device] = nil
                    effects.append(.connectivity(state, device: device))
                }
                continue
            }
            let before = told[device]
            told[device] = state
            var said = toldTraits[device] ?? [:]
            for (slot, traitState) in traitConnectivity(of: device).sorted(by: { $0.key < $1.key }) {
                let previous = said[slot] ?? before
                if previous != traitState {
                    effects.append(.traitConnectivity(traitState, device: device, trait: slot.trait, deviceType: slot.type))
                }
                said[slot] = traitState
            }
            toldTraits[device] = said
        }
        return effects
    }

    // MARK: Commands

    /// What a command or write resolved to.
    struct Resolved {
        let action: Action
        let device: String
        let optimistic: Bool
        let deviceType: DeviceTypeID?
    }

    /// Finds what a command does; throws ``HomeError`` when no entity of the device takes it.
    func action(for command: DriverCommand) throws -> Resolved {
        let key = CommandKey(trait: command.trait, command: command.command)
        guard let (entity, handler) = try handler(device: command.localID, deviceType: command.deviceType, { $0.commands[key] }) else {
            throw HomeError.unsupportedOperation(
                "MQTT device \(command.localID) has no command topic for command \(command.command.hex) of trait \(command.trait.hex)")
        }
        let action = try handler(command.arguments, CurrentValues(values: values[command.localID] ?? [:]))
        return Resolved(action: action, device: command.localID, optimistic: entity.optimistic, deviceType: entity.deviceType)
    }

    /// Finds what an attribute write does.
    func action(for write: DriverWrite) throws -> Resolved {
        let key = WriteKey(trait: write.trait, attribute: write.attribute)
        guard let (entity, handler) = try handler(device: write.localID, deviceType: write.deviceType, { $0.writes[key] }) else {
            throw HomeError.unsupportedOperation(
                "MQTT device \(write.localID) cannot write attribute \(write.attribute.hex) of trait \(write.trait.hex)")
        }
        let action = try handler(["value": write.value], CurrentValues(values: values[write.localID] ?? [:]))
        return Resolved(action: action, device: write.localID, optimistic: entity.optimistic, deviceType: entity.deviceType)
    }

    /// The state an optimistic entity assumes after a command.
    mutating func assume(_ resolved: Resolved) -> [Effect] {
        guard resolved.optimistic, let key = devices[resolved.device]?.first(where: { entities[$0]?.deviceType == resolved.deviceType }),
            let entity = entities[key]
        else { return [] }
        return apply(resolved.action.assumed, entity: entity, device: resolved.device)
    }

    private func handler(device: String, deviceType: DeviceTypeID, _ pick: (Entity) -> CommandHandler?) throws -> (Entity, CommandHandler)? {
        guard let keys = devices[device], published.contains(device) else { throw HomeError.notFound("no MQTT device \(device)") }
        guard connected else { throw HomeError.deviceOffline("the MQTT broker is not connected; cannot reach \(device)") }
        let candidates = keys.compactMap { entities[$0] }.compactMap { e in pick(e).map { (e, $0) } }
        return candidates.first { $0.0.deviceType == deviceType } ?? candidates.first
    }

    /// Every topic subscribed, for tests and diagnostics.
    var subscribedTopics: Set<String> { Set(routes.keys).union(discoveryTopic.map { [$0] } ?? []) }
}
