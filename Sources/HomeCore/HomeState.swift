public import HomeModel
public import DriverAPI
public import HashTreeCollections

/// The whole home at one version: a pure value that ``HomeState/apply(_:catalog:)`` moves forward.
///
/// Persistent collections (`TreeDictionary`) share structure between versions, so handing the
/// current devices to many subscribers copies nothing.
public struct HomeState: Sendable {
    public internal(set) var version: UInt64 = 0
    /// Every device: discovered and commissioned (a view over the two trees below).
    public internal(set) var devices = DeviceTable()
    /// The commissioned devices only: what `devices()` shows.
    public var commissioned: TreeDictionary<DeviceID, DeviceSnapshot> { devices.commissioned }
    /// The discovered devices only: the list waiting to be commissioned.
    public var discovered: TreeDictionary<DeviceID, DeviceSnapshot> { devices.discovered }
    public internal(set) var structures: TreeDictionary<StructureID, StructureSnapshot> = [:]
    public internal(set) var rooms: TreeDictionary<RoomID, RoomSnapshot> = [:]
    /// When each device last reported (core clock, nanoseconds since the Unix epoch), for a
    /// state of its own. A state the core owns keeps these times in the core's
    /// ``LastSeenTable`` instead (``HomeCore/lastSeen``), and this stays empty.
    public internal(set) var lastSeen: TreeDictionary<DeviceID, UInt64> = [:]
    /// The core's unversioned last-seen table, when the core owns this state.
    var lastSeenTable: LastSeenTable?

    public init() {}

    init(lastSeenTable: LastSeenTable) {
        self.lastSeenTable = lastSeenTable
    }

    mutating func put(_ device: DeviceSnapshot) {
        devices.put(device)
    }

    mutating func drop(_ id: DeviceID) {
        devices.drop(id)
        seen(id, at: nil)
    }

    /// Records when a device was last seen (nil: forgets it).
    mutating func seen(_ id: DeviceID, at: UInt64?) {
        if let lastSeenTable {
            lastSeenTable.times[id] = at
        } else {
            lastSeen[id] = at
        }
    }
}

/// A change offered to the state machine.
public enum HomeChange: Sendable {
    case publish(plugin: String, DeviceDescription)
    case remove(plugin: String, localID: String)
    case report(plugin: String, [AttributeReport], at: UInt64)
    case event(plugin: String, EventReport, at: UInt64)
    case connectivity(plugin: String, localID: String?, ConnectivityState)
    /// One trait's connectivity (of one device type, or of every type that has the trait).
    case traitConnectivity(plugin: String, localID: String, deviceType: DeviceTypeID?, trait: TraitID, ConnectivityState)
    case layout(LayoutEdit)
    /// Several layout edits as one change: each checked against the state the ones before it
    /// leave; all of them happen (one version, one save) or, when one is refused, none.
    case layoutEdits([LayoutEdit])
    /// Restores the layout and device registry (from storage) at start-up.
    case restore(structures: [StructureSnapshot], rooms: [RoomSnapshot], devices: [DeviceSnapshot])
}

/// An edit of the layout or of a device's place in it.
public enum LayoutEdit: Hashable, Sendable {
    case createStructure(StructureID, name: String)
    case renameStructure(StructureID, name: String)
    case deleteStructure(StructureID)
    case createRoom(RoomID, in: StructureID, name: String)
    case renameRoom(RoomID, name: String)
    case deleteRoom(RoomID)
    case renameDevice(DeviceID, name: String)
    case moveDevice(DeviceID, to: RoomID?)
    case commission(DeviceID, name: String, structure: StructureID, room: RoomID?, primaryType: DeviceTypeID?)
    case decommission(DeviceID)
    case removeDevice(DeviceID)
}

/// What one change did: which devices changed and how, whether structures or rooms changed,
/// events accepted, and problems with the input (logged by the owner, never fatal).
public struct HomeOutcome: Sendable {
    public var version: UInt64
    /// Who caused the change (set by the core's owner).
    public var origin: ChangeOrigin = .system
    public var devices: [(DeviceID, DeviceChangeKind)] = []
    public var structuresChanged = false
    public var roomsChanged = false
    public var events: [DeviceEvent] = []
    /// Input that was refused, with the device it concerned and why.
    public var rejected: [(device: DeviceID?, key: String, message: String)] = []
    /// Devices whose last-seen time moved without any other change.
    public var refreshed = 0

    public var isEmpty: Bool { devices.isEmpty && !structuresChanged && !roomsChanged && events.isEmpty }
}

extension HomeState {
    /// Applies a change. Throws for a refused layout edit (nothing changes); bad driver input
    /// is refused item by item and listed in ``HomeOutcome/rejected``.
    public mutating func apply(_ change: HomeChange, catalog: Catalog) throws(HomeError) -> HomeOutcome {
        var outcome = HomeOutcome(version: version)
        switch change {
        case .publish(let plugin, let description):
            publish(plugin: plugin, description, catalog: catalog, into: &outcome)
        case .remove(let plugin, let localID):
            remove(DeviceID(plugin: plugin, local: localID), into: &outcome)
        case .report(let plugin, let reports, let at):
            for r in reports { report(DeviceID(plugin: plugin, local: r.localID), r, at: at, catalog: catalog, into: &outcome) }
        case .event(let plugin, let e, let at):
            event(DeviceID(plugin: plugin, local: e.localID), e, at: at, catalog: catalog, into: &outcome)
        case .connectivity(let plugin, let localID, let state):
            let ids = localID.map { [DeviceID(plugin: plugin, local: $0)] } ?? devices.keys.filter { $0.pluginID == plugin }
            for id in ids { setConnectivity(id, state, into: &outcome) }
        case .traitConnectivity(let plugin, let localID, let type, let trait, let state):
            setConnectivity(DeviceID(plugin: plugin, local: localID), state, trait: (type, trait), into: &outcome)
        case .layout(let edit):
            try layout(edit, catalog: catalog, into: &outcome)
        case .layoutEdits(let edits):
            for edit in edits { try layout(edit, catalog: catalog, into: &outcome) }
            // A device two edits touched is listed once, with the last kind of change.
            var last: [DeviceID: Int] = [:]
            for (i, (id, _)) in outcome.devices.enumerated() { last[id] = i }
            outcome.devices = outcome.devices.enumerated().filter { last[$0.element.0] == $0.offset }.map(\.element)
        case .restore(let s, let r, let d):
            for x in s { structures[x.id] = x }
            for x in r { rooms[x.id] = x }
            for var x in d {
                for i in x.types.indices {
                    // Unknown until the plugin reports again; a device last known offline
                    // stays offline (it stopped reporting and stays until an admin removes it).
                    for t in x.types[i].traits.keys where x.types[i].traits[t]!.sourceConnectivity.connectivityState != .offline {
                        x.types[i].traits[t]!.sourceConnectivity.connectivityState = .unknown
                    }
                }
                put(x)
                outcome.devices.append((x.id, .added))
            }
            outcome.structuresChanged = !s.isEmpty
            outcome.roomsChanged = !r.isEmpty
        }
        if !outcome.isEmpty {
            version += 1
            outcome.version = version
            for i in outcome.events.indices { outcome.events[i].version = version }
        }
        return outcome
    }

    // MARK: - Driver input

    mutating func publish(plugin: String, _ d: DeviceDescription, catalog: Catalog, into outcome: inout HomeOutcome) {
        let id = DeviceID(plugin: plugin, local: d.localID)
        var types: [DeviceTypeState] = []
        let existing = devices[id]
        let primaryIndex = d.types.firstIndex(where: \.isPrimary) ?? 0
        for (index, t) in d.types.enumerated() {
            guard catalog.deviceType(t.id) != nil else {
                outcome.rejected.append((id, "type:\(t.id.hex)", "unknown device type \(t.id.hex); not in the catalogue"))
                continue
            }
            var traits: [TraitID: TraitState] = [:]
            var declared = t.traits
            if index == primaryIndex, let identity = d.identity {
                // The identity shows as the primary type's Basic Information (the plugin's own
                // values of the trait, if it gave any, win).
                var info = identity.basicInformation
                if info[BasicInformationTrait.Attribute.uniqueID] == nil {
                    info[BasicInformationTrait.Attribute.uniqueID] = .string(String(id.rawValue.prefix(32)))
                }
                declared[BasicInformationTrait.identifier, default: [:]].merge(info) { plugin, _ in plugin }
            }
            for (traitID, initial) in declared {
                var attributes = existing?.type(t.id)?.traits[traitID]?.attributes ?? [:]
                for (attributeID, value) in initial {
                    // The same check a later report gets: what publish accepts, report accepts.
                    let probe = AttributeReport(localID: d.localID, trait: traitID, attribute: attributeID, value: value)
                    if let refusal = Self.refusal(of: probe, catalog: catalog) {
                        outcome.rejected.append((id, refusal.key, refusal.message))
                        continue
                    }
                    attributes[attributeID] = value
                }
                traits[traitID] = TraitState(
                    id: traitID, attributes: attributes,
                    sourceConnectivity: SourceConnectivity(connectivityState: .online, dataSourceLocality: d.locality))
            }
            types.append(DeviceTypeState(id: t.id, isPrimary: index == primaryIndex, traits: traits))
        }
        if let first = types.indices.first, !types.contains(where: \.isPrimary) { types[first].isPrimary = true }

        if var device = existing {
            device.types = types
            device.manufacturer = d.manufacturer
            device.model = d.model
            device.suggestedRoom = device.commissioning == .discovered ? d.suggestedRoom : nil
            if device.commissioning == .discovered { device.name = d.name }
            if device != existing {
                let shapeChanged = device.types.map(\.id) != existing!.types.map(\.id)
                    || device.types.map { Set($0.traits.keys) } != existing!.types.map { Set($0.traits.keys) }
                    || device.sourceConnectivity != existing!.sourceConnectivity || device.name != existing!.name
                put(device)
                outcome.devices.append((id, shapeChanged ? .shape : .attributes))
            }
            return
        }
        var device = DeviceSnapshot(
            id: id, name: d.name, types: types, manufacturer: d.manufacturer, model: d.model, suggestedRoom: d.suggestedRoom)
        if let hint = d.commission {
            commissionFromHint(&device, hint, into: &outcome)
            if device.commissioning == .commissioned { device.suggestedRoom = nil }
        }
        put(device)
        outcome.devices.append((id, .added))
    }

    /// Places a device the configuration names (pre-commissioning): the structure by name (the
    /// first one, created as "Home" when there is none), the room by name (created if missing).
    mutating func commissionFromHint(_ device: inout DeviceSnapshot, _ hint: CommissionHint, into outcome: inout HomeOutcome) {
        let verdict = NamingRules.check(hint.name)
        guard verdict.isValid else {
            outcome.rejected.append((device.id, "commission", "not commissioned: " + verdict.violations.map(\.rule).joined(separator: "; ")))
            return
        }
        let structureName = hint.structure ?? structures.values.sorted { $0.id < $1.id }.first?.name ?? "Home"
        let structure: StructureID
        if let s = structures.values.first(where: { NamingRules.normalised($0.name) == NamingRules.normalised(structureName) }) {
            structure = s.id
        } else {
            structure = StructureID(rawValue: "structure-" + Self.slug(structureName))
            structures[structure] = StructureSnapshot(id: structure, name: structureName)
            outcome.structuresChanged = true
        }
        var room: RoomID?
        if let roomName = hint.room, NamingRules.check(roomName).isValid {
            if let r = rooms.values.first(where: {
                $0.structureID == structure && NamingRules.normalised($0.name) == NamingRules.normalised(roomName)
            }) {
                room = r.id
            } else {
                let rid = RoomID(rawValue: "room-" + Self.slug(structureName) + "-" + Self.slug(roomName))
                rooms[rid] = RoomSnapshot(id: rid, structureID: structure, name: NamingRules.check(roomName).name)
                outcome.roomsChanged = true
                room = rid
            }
        }
        device.name = verdict.name
        device.structureID = structure
        device.roomID = room
        device.commissioning = .commissioned
    }

    static func slug(_ s: String) -> String {
        let lowered = s.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        return String(lowered).split(separator: "-").joined(separator: "-")
    }

    mutating func remove(_ id: DeviceID, into outcome: inout HomeOutcome) {
        guard let device = devices[id] else { return }
        if device.commissioning == .commissioned {
            setConnectivity(id, .offline, into: &outcome)
        } else {
            drop(id)
            outcome.devices.append((id, .removed))
        }
    }

    mutating func report(_ id: DeviceID, _ r: AttributeReport, at: UInt64, catalog: Catalog, into outcome: inout HomeOutcome) {
        if let refusal = Self.refusal(of: r, catalog: catalog) {
            outcome.rejected.append(devices[id] == nil ? Self.unknown(id) : (id, refusal.key, refusal.message))
            return
        }
        // The device is edited where it is (one descent of its tree, the key never removed and
        // re-inserted) through `subscript(_:default:)`'s `_modify`, never through
        // `subscript(_:)`'s: swift-collections 1.6.0 prepares the latter with an `_UnsafePath`
        // taken before it copies a node that a snapshot shares, and its debug assertions then
        // read that old node, which a subscriber dropping its snapshot on another thread may
        // have freed (the debug build crashed under report churn). No read of the slot comes
        // before the edit: a device that is not there gets the default, which is taken out
        // again at once. Which tree holds the device: when one tree is empty, the other; else
        // a read of the smaller one (shallow: in a running home the discovered list is short,
        // while the home is first found everything is discovered).
        let inCommissioned: Bool
        if devices.discovered.isEmpty {
            inCommissioned = true
        } else if devices.commissioned.isEmpty {
            inCommissioned = false
        } else if devices.discovered.count <= devices.commissioned.count {
            inCommissioned = devices.discovered[id] == nil
        } else {
            inCommissioned = devices.commissioned[id] != nil
        }
        let edit: ReportEdit
        if inCommissioned {
            edit = Self.applyReport(r, to: &devices.commissioned[id, default: .vacancy])
            if case .unknownDevice = edit { devices.commissioned.removeValue(forKey: id) }
        } else {
            edit = Self.applyReport(r, to: &devices.discovered[id, default: .vacancy])
            if case .unknownDevice = edit { devices.discovered.removeValue(forKey: id) }
        }
        switch edit {
        case .unknownDevice:
            outcome.rejected.append(Self.unknown(id))
        case .noSuchTrait:
            seen(id, at: at)
            outcome.rejected.append((id, "\(r.trait.hex)", "device \(id) has no trait \(catalog.trait(r.trait)?.name ?? r.trait.hex)"))
        case .unchanged:
            seen(id, at: at)
            outcome.refreshed += 1
        case .changed(let kind):
            seen(id, at: at)
            outcome.devices.append((id, kind))
        }
    }

    static func unknown(_ id: DeviceID) -> (device: DeviceID?, key: String, message: String) {
        (id, "unknown", "report for unknown device \(id) (publish it first)")
    }

    /// What a report did to its device.
    enum ReportEdit {
        case unknownDevice
        case noSuchTrait
        case unchanged
        case changed(DeviceChangeKind)
    }

    /// Why the catalogue refuses a report, if it does (checked before any device is touched).
    static func refusal(of r: AttributeReport, catalog: Catalog) -> (key: String, message: String)? {
        catalog.refusal(r.trait, r.attribute, r.value).map { ("\(r.trait.hex)/\(r.attribute.hex)", $0) }
    }

    /// Applies one report to the device in `slot` (from one of ``devices``' trees,
    /// ``DeviceSnapshot/vacancy`` when there is none), edited where it is.
    static func applyReport(_ r: AttributeReport, to slot: inout DeviceSnapshot) -> ReportEdit {
        guard !slot.isVacancy else { return .unknownDevice }
        return record(r, in: &slot)
    }

    /// Records one report's value in the device's traits (every type that has the trait, or the
    /// one the report names).
    static func record(_ r: AttributeReport, in device: inout DeviceSnapshot) -> ReportEdit {
        var found = false
        var valueChanged = false
        var shapeChanged = false
        for i in device.types.indices where r.deviceType == nil || device.types[i].id == r.deviceType {
            guard let t = device.types[i].traits.index(forKey: r.trait) else { continue }
            found = true
            let (changed, cameOnline) = device.types[i].traits.values[t].record(r.value, for: r.attribute)
            valueChanged = valueChanged || changed
            shapeChanged = shapeChanged || cameOnline
        }
        guard found else { return .noSuchTrait }
        return valueChanged || shapeChanged ? .changed(shapeChanged ? .shape : .attributes) : .unchanged
    }

    mutating func event(_ id: DeviceID, _ e: EventReport, at: UInt64, catalog: Catalog, into outcome: inout HomeOutcome) {
        guard let device = devices[id] else {
            outcome.rejected.append((id, "unknown", "event for unknown device \(id)"))
            return
        }
        guard let type = device.types.first(where: { (e.deviceType == nil || $0.id == e.deviceType) && $0.traits[e.trait] != nil })
        else {
            outcome.rejected.append((id, "\(e.trait.hex)", "device \(id) has no trait \(e.trait.hex) for event \(e.event.hex)"))
            return
        }
        if let descriptor = catalog.trait(e.trait) {
            guard let ev = descriptor.event(e.event) else {
                outcome.rejected.append((id, "\(e.trait.hex)/event", "trait \(descriptor.name) has no event \(e.event.hex)"))
                return
            }
            for field in ev.fields {
                if let v = e.fields[field.name] {
                    do throws(HomeError) {
                        try field.validate(v, in: "event \(descriptor.name).\(ev.name)")
                    } catch {
                        outcome.rejected.append((id, "\(e.trait.hex)/event/\(e.event.hex)", error.message))
                        return
                    }
                }
            }
        }
        seen(id, at: at)
        outcome.events.append(
            DeviceEvent(
                device: id, deviceType: type.id, trait: e.trait, event: e.event, fields: e.fields,
                timestampNanoseconds: e.timestampNanoseconds ?? at))
    }

    /// Sets every trait of the device, or only `trait` (of its type, or of every type with it).
    mutating func setConnectivity(
        _ id: DeviceID, _ state: ConnectivityState, trait only: (type: DeviceTypeID?, trait: TraitID)? = nil, into outcome: inout HomeOutcome
    ) {
        guard var device = devices[id] else { return }
        var changed = false
        for i in device.types.indices {
            if let only, let type = only.type, device.types[i].id != type { continue }
            for t in device.types[i].traits.keys where device.types[i].traits[t]!.sourceConnectivity.connectivityState != state {
                if let only, t != only.trait { continue }
                device.types[i].traits[t]!.sourceConnectivity.connectivityState = state
                changed = true
            }
        }
        if changed {
            put(device)
            outcome.devices.append((id, .shape))
        }
    }
}

extension DeviceSnapshot {
    /// Stands in a dictionary slot while its device is edited (never seen outside: no storage).
    static let vacancy = DeviceSnapshot(id: DeviceID(rawValue: ""), name: "", types: [])

    /// Whether this is ``vacancy`` (no device has an empty ID).
    var isVacancy: Bool { id.rawValue.isEmpty }
}

extension TraitState {
    /// Stores a reported value and marks the trait online, hashing the attribute ID once.
    /// - Returns: whether the value differed and whether the trait was not online before.
    mutating func record(_ value: Value, for attribute: AttributeID) -> (valueChanged: Bool, cameOnline: Bool) {
        let valueChanged: Bool
        if let slot = attributes.index(forKey: attribute) {
            valueChanged = attributes.values[slot] != value
            if valueChanged { attributes.values[slot] = value }
        } else {
            valueChanged = true
            attributes[attribute] = value
        }
        let cameOnline = sourceConnectivity.connectivityState != .online
        if cameOnline { sourceConnectivity.connectivityState = .online }
        return (valueChanged, cameOnline)
    }
}
