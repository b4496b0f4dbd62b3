public import HomeModel

// The WebSocket protocol on `/api/v1/ws`, once, for the server, the Swift client and (through
// `Web/wire.js`, checked against ``WSServerMessage/Kind`` by a test) the web page.
//
// One socket per client carries all its subscriptions, each named by the client's `id`.
// Every message is a JSON object with a `type`; the other keys belong to that type.

/// How a set subscription delivers changes: the whole set each time, or what changed.
public enum SubscriptionMode: String, WireEnum {
    /// The whole set on every change (only the newest if the client is slow).
    case batched
    /// The whole set first, then `added` / `updated` / `removed`; a fresh snapshot after overflow.
    case stream
    public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
}

/// What a subscription observes.
public enum SubscriptionQuery: Hashable, Sendable {
    case devices(SubscriptionMode)
    /// Devices waiting to be commissioned (admins).
    case discovered(SubscriptionMode)
    case rooms(SubscriptionMode)
    case structures(SubscriptionMode)
    /// One device: its whole state on every change.
    case device(DeviceID)
    /// Every visible device once, then the devices that changed, each in its newest state.
    case deviceUpdates
    /// Every visible device once, then attribute changes as deltas (``DeviceDelta``).
    case deviceDeltas
    /// Device events (button presses, alarms), optionally of one device and trait.
    case events(device: DeviceID?, trait: IDRef?)
    /// The people of the home (admins and members; names and roles, never credentials).
    case users(SubscriptionMode)
    /// Automation run traces as they happen (start, each step, end; near-misses too), of one
    /// automation or of every one the session may read; never coalesced.
    case automationRuns(automation: String?)

    /// The query's name on the wire.
    public var name: Name {
        switch self {
        case .devices: .devices
        case .discovered: .discovered
        case .rooms: .rooms
        case .structures: .structures
        case .device: .device
        case .deviceUpdates: .deviceUpdates
        case .deviceDeltas: .deviceDeltas
        case .events: .events
        case .users: .users
        case .automationRuns: .automationRuns
        }
    }

    public enum Name: String, WireEnum {
        case devices, discovered, rooms, structures, device, deviceUpdates, deviceDeltas, events, users, automationRuns
        public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
    }
}

/// What a client sends.
///
/// `{"type":"subscribe","id":"s1","query":"devices","mode":"stream"}`,
/// `{"type":"subscribe","id":"d","query":"device","device":"demo:lamp"}`,
/// `{"type":"subscribe","id":"r","query":"automationRuns","automation":"hall-light"}`,
/// `{"type":"unsubscribe","id":"s1"}`, `{"type":"ping","id":"p1"}`.
public enum WSClientMessage: Hashable, Sendable, Codable {
    case subscribe(id: String, SubscriptionQuery)
    case unsubscribe(id: String)
    case ping(id: String?)

    public enum Kind: String, WireEnum {
        case subscribe, unsubscribe, ping
        public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
    }

    /// Every key a client message may carry (others are refused).
    public enum CodingKeys: String, CodingKey, CaseIterable { case type, id, query, mode, device, trait, automation }
    public static var keys: Set<String> { Set(CodingKeys.allCases.map(\.stringValue)) }

    public var kind: Kind {
        switch self {
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .ping: .ping
        }
    }

    /// The subscription (or ping) it names.
    public var id: String? {
        switch self {
        case .subscribe(let id, _), .unsubscribe(let id): id
        case .ping(let id): id
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let id = try c.decodeIfPresent(String.self, forKey: .id)
        switch try c.decode(Kind.self, forKey: .type) {
        case .ping: self = .ping(id: id)
        case .unsubscribe: self = .unsubscribe(id: try c.decode(String.self, forKey: .id))
        case .subscribe:
            let mode = try c.decodeIfPresent(SubscriptionMode.self, forKey: .mode) ?? .batched
            let query: SubscriptionQuery
            switch try c.decode(SubscriptionQuery.Name.self, forKey: .query) {
            case .devices: query = .devices(mode)
            case .discovered: query = .discovered(mode)
            case .rooms: query = .rooms(mode)
            case .structures: query = .structures(mode)
            case .device: query = .device(try c.decode(DeviceID.self, forKey: .device))
            case .deviceUpdates: query = .deviceUpdates
            case .deviceDeltas: query = .deviceDeltas
            case .users: query = .users(mode)
            case .automationRuns: query = .automationRuns(automation: try c.decodeIfPresent(String.self, forKey: .automation))
            case .events:
                query = .events(device: try c.decodeIfPresent(DeviceID.self, forKey: .device), trait: try c.decodeIfPresent(IDRef.self, forKey: .trait))
            }
            self = .subscribe(id: try c.decode(String.self, forKey: .id), query)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .type)
        try c.encodeIfPresent(id, forKey: .id)
        guard case .subscribe(_, let query) = self else { return }
        try c.encode(query.name, forKey: .query)
        switch query {
        case .devices(let m), .discovered(let m), .rooms(let m), .structures(let m), .users(let m): try c.encode(m, forKey: .mode)
        case .device(let d): try c.encode(d, forKey: .device)
        case .events(let d, let t):
            try c.encodeIfPresent(d, forKey: .device)
            try c.encodeIfPresent(t, forKey: .trait)
        case .automationRuns(let a): try c.encodeIfPresent(a, forKey: .automation)
        case .deviceUpdates, .deviceDeltas: break
        }
    }
}

/// Why a subscription ended (``WSServerMessage/end(id:reason:message:)``).
public enum EndReason: String, WireEnum {
    /// The session's access was revoked or narrowed: the next call gets `permissionDenied`.
    case permissionDenied
    /// The one device it watched was removed or is no longer visible.
    case deviceRemoved
    /// The server shuts down or the subscription's source finished.
    case ended
    public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
}

/// One element of a set subscription.
public enum SetElement: Hashable, Sendable {
    case device(WireDevice)
    case room(RoomSnapshot)
    case structure(StructureSnapshot)
    case user(WireUser)
}

/// A whole set at a version.
public enum SetSnapshot: Hashable, Sendable {
    case devices([WireDevice])
    case rooms([RoomSnapshot])
    case structures([StructureSnapshot])
    case users([WireUser])
}

/// What changed on one device: the attributes with their new values, or the whole device
/// when the client has not seen it yet (or its shape changed).
public struct DeviceDelta: Hashable, Sendable, Codable {
    public let device: DeviceID
    /// The whole device, when it is new to this subscription or its types or traits changed.
    public let full: WireDevice?
    /// Attribute changes since the previous message (empty when ``full`` is set).
    public let attributes: [AttributeDelta]

    public init(device: DeviceID, full: WireDevice? = nil, attributes: [AttributeDelta] = []) {
        self.device = device
        self.full = full
        self.attributes = attributes
    }
}

/// One attribute's new value in a ``DeviceDelta``.
public struct AttributeDelta: Hashable, Sendable, Codable {
    public let type: DeviceTypeID
    public let trait: TraitID
    public let attribute: AttributeID
    public let value: Value
    public init(type: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value) {
        self.type = type
        self.trait = trait
        self.attribute = attribute
        self.value = value
    }
}

/// What the server sends, each tagged with the subscription's `id`.
public enum WSServerMessage: Hashable, Sendable, Codable {
    case subscribed(id: String)
    case unsubscribed(id: String)
    case pong(id: String?)
    /// The whole set: first on subscribing, on every change in batched mode, and again when a
    /// slow stream fell behind.
    case snapshot(id: String, version: UInt64, SetSnapshot)
    case added(id: String, SetElement)
    case updated(id: String, SetElement)
    /// The removed element's ID as text.
    case removed(id: String, key: String)
    /// One device's current state (`device` subscriptions).
    case device(id: String, WireDevice)
    /// `deviceUpdates`: the devices whose state changed since the previous message (the
    /// first: every visible device), each once in its newest state.
    case changed(id: String, version: UInt64, devices: [WireDevice])
    /// `deviceDeltas`: what changed on each device since the previous message.
    case delta(id: String, version: UInt64, changes: [DeviceDelta])
    case event(id: String, WireEvent)
    /// `automationRuns`: a run trace that is new or changed (the engine's JSON, as
    /// `GET /runs/ID` gives it); `missed`: updates this subscription lost before it because
    /// the client read too slowly (0 normally).
    case run(id: String, run: Value, missed: Int)
    /// The subscription ended, and why.
    case end(id: String, reason: EndReason, message: String)
    /// A request failed (the subscription `id` names, if any).
    case error(id: String?, WireError)
    /// The server is about to close the socket (the token was revoked, for example).
    case closing(WireError)
    /// The session's grant changed (an admin edited it or approved a permission change): its
    /// new scope. Socket-wide; the subscriptions follow on their own (sets shrink or grow, a
    /// `device` subscription to a device now outside the grant ends with `permissionDenied`).
    case grantUpdated(WireScope)

    /// The `type` of each message: the web page's `Web/wire.js` lists the same (a test checks).
    public enum Kind: String, WireEnum {
        case subscribed, unsubscribed, pong, snapshot, added, updated, removed, device, changed, delta, event, end, error, closing
        case grantUpdated, run
        public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }
    }

    enum CodingKeys: String, CodingKey {
        case type, id, version, devices, rooms, structures, device, room, structure, key, event, changes, reason, message, error
        case users, user, scope, run, missed
    }

    public var kind: Kind {
        switch self {
        case .subscribed: .subscribed
        case .unsubscribed: .unsubscribed
        case .pong: .pong
        case .snapshot: .snapshot
        case .added: .added
        case .updated: .updated
        case .removed: .removed
        case .device: .device
        case .changed: .changed
        case .delta: .delta
        case .event: .event
        case .end: .end
        case .error: .error
        case .closing: .closing
        case .grantUpdated: .grantUpdated
        case .run: .run
        }
    }

    /// The subscription the message belongs to (nil for `closing` and socket-wide errors).
    public var id: String? {
        switch self {
        case .subscribed(let id), .unsubscribed(let id), .snapshot(let id, _, _), .added(let id, _), .updated(let id, _),
            .removed(let id, _), .device(let id, _), .changed(let id, _, _), .delta(let id, _, _), .event(let id, _), .end(let id, _, _),
            .run(let id, _, _):
            id
        case .pong(let id), .error(let id, _): id
        case .closing, .grantUpdated: nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .type)
        try c.encodeIfPresent(id, forKey: .id)
        switch self {
        case .subscribed, .unsubscribed, .pong: break
        case .snapshot(_, let version, let set):
            try c.encode(version, forKey: .version)
            switch set {
            case .devices(let d): try c.encode(d, forKey: .devices)
            case .rooms(let r): try c.encode(r, forKey: .rooms)
            case .structures(let s): try c.encode(s, forKey: .structures)
            case .users(let u): try c.encode(u, forKey: .users)
            }
        case .added(_, let e), .updated(_, let e): try Self.encode(e, in: &c)
        case .removed(_, let key): try c.encode(key, forKey: .key)
        case .device(_, let d): try c.encode(d, forKey: .device)
        case .changed(_, let version, let devices):
            try c.encode(version, forKey: .version)
            try c.encode(devices, forKey: .devices)
        case .delta(_, let version, let changes):
            try c.encode(version, forKey: .version)
            try c.encode(changes, forKey: .changes)
        case .event(_, let e): try c.encode(e, forKey: .event)
        case .run(_, let run, let missed):
            try c.encode(run, forKey: .run)
            try c.encode(missed, forKey: .missed)
        case .end(_, let reason, let message):
            try c.encode(reason, forKey: .reason)
            try c.encode(message, forKey: .message)
        case .error(_, let e), .closing(let e): try c.encode(e, forKey: .error)
        case .grantUpdated(let scope): try c.encode(scope, forKey: .scope)
        }
    }

    static func encode(_ e: SetElement, in c: inout KeyedEncodingContainer<CodingKeys>) throws {
        switch e {
        case .device(let d): try c.encode(d, forKey: .device)
        case .room(let r): try c.encode(r, forKey: .room)
        case .structure(let s): try c.encode(s, forKey: .structure)
        case .user(let u): try c.encode(u, forKey: .user)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try c.decode(Kind.self, forKey: .type)
        func id() throws -> String { try c.decode(String.self, forKey: .id) }
        func element() throws -> SetElement {
            if let d = try c.decodeIfPresent(WireDevice.self, forKey: .device) { return .device(d) }
            if let r = try c.decodeIfPresent(RoomSnapshot.self, forKey: .room) { return .room(r) }
            if let u = try c.decodeIfPresent(WireUser.self, forKey: .user) { return .user(u) }
            return .structure(try c.decode(StructureSnapshot.self, forKey: .structure))
        }
        switch kind {
        case .subscribed: self = .subscribed(id: try id())
        case .unsubscribed: self = .unsubscribed(id: try id())
        case .pong: self = .pong(id: try c.decodeIfPresent(String.self, forKey: .id))
        case .snapshot:
            let set: SetSnapshot
            if let d = try c.decodeIfPresent([WireDevice].self, forKey: .devices) {
                set = .devices(d)
            } else if let r = try c.decodeIfPresent([RoomSnapshot].self, forKey: .rooms) {
                set = .rooms(r)
            } else if let u = try c.decodeIfPresent([WireUser].self, forKey: .users) {
                set = .users(u)
            } else {
                set = .structures(try c.decode([StructureSnapshot].self, forKey: .structures))
            }
            self = .snapshot(id: try id(), version: try c.decode(UInt64.self, forKey: .version), set)
        case .added: self = .added(id: try id(), try element())
        case .updated: self = .updated(id: try id(), try element())
        case .removed: self = .removed(id: try id(), key: try c.decode(String.self, forKey: .key))
        case .device: self = .device(id: try id(), try c.decode(WireDevice.self, forKey: .device))
        case .changed:
            self = .changed(id: try id(), version: try c.decode(UInt64.self, forKey: .version), devices: try c.decode([WireDevice].self, forKey: .devices))
        case .delta:
            self = .delta(id: try id(), version: try c.decode(UInt64.self, forKey: .version), changes: try c.decode([DeviceDelta].self, forKey: .changes))
        case .event: self = .event(id: try id(), try c.decode(WireEvent.self, forKey: .event))
        case .run: self = .run(id: try id(), run: try c.decode(Value.self, forKey: .run), missed: try c.decodeIfPresent(Int.self, forKey: .missed) ?? 0)
        case .end:
            self = .end(id: try id(), reason: try c.decode(EndReason.self, forKey: .reason), message: try c.decodeIfPresent(String.self, forKey: .message) ?? "")
        case .error: self = .error(id: try c.decodeIfPresent(String.self, forKey: .id), try c.decode(WireError.self, forKey: .error))
        case .closing: self = .closing(try c.decode(WireError.self, forKey: .error))
        case .grantUpdated: self = .grantUpdated(try c.decode(WireScope.self, forKey: .scope))
        }
    }
}

extension DeviceDelta {
    /// What changed from `old` to `new`: the whole device when `old` is nil or anything but
    /// attribute values changed (name, place, types, traits, connectivity); else the
    /// attributes whose value changed; nil when nothing did.
    public static func between(_ old: WireDevice?, _ new: WireDevice) -> DeviceDelta? {
        guard let old else { return DeviceDelta(device: new.id, full: new) }
        if old == new { return nil }
        guard old.withoutValues == new.withoutValues else { return DeviceDelta(device: new.id, full: new) }
        var changes: [AttributeDelta] = []
        for (t, type) in new.types.enumerated() {
            for (r, trait) in type.traits.enumerated() {
                let before = old.types[t].traits[r].attributes
                for (a, attribute) in trait.attributes.enumerated() where before[a].value != attribute.value {
                    changes.append(AttributeDelta(type: type.id, trait: trait.id, attribute: attribute.id, value: attribute.value))
                }
            }
        }
        return DeviceDelta(device: new.id, attributes: changes)
    }

    /// `old` with this delta applied (what a client keeps); nil when it needs a device it lacks.
    public func applied(to old: WireDevice?) -> WireDevice? {
        if let full { return full }
        guard var device = old else { return nil }
        for change in attributes {
            guard let t = device.types.firstIndex(where: { $0.id == change.type }),
                let r = device.types[t].traits.firstIndex(where: { $0.id == change.trait }),
                let a = device.types[t].traits[r].attributes.firstIndex(where: { $0.id == change.attribute })
            else { return nil }
            device.types[t].traits[r].attributes[a].value = change.value
        }
        return device
    }
}

extension WireDevice {
    /// The device with every attribute value blanked: equal for two states that differ only in values.
    var withoutValues: WireDevice {
        var d = self
        for t in d.types.indices {
            for r in d.types[t].traits.indices {
                for a in d.types[t].traits[r].attributes.indices { d.types[t].traits[r].attributes[a].value = .null }
            }
        }
        return d
    }
}
