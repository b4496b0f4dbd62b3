public import HomeModel

/// Who caused a change: every change the core accepts carries one, with the core's version.
public enum ChangeOrigin: Hashable, Sendable, Codable, CustomStringConvertible {
    /// A driver plugin's report.
    case plugin(String)
    /// A client's command or write, by principal.
    case client(String)
    /// A layout edit (rename, room, commissioning), by principal.
    case layout(String)
    /// The core itself (start-up, restore).
    case system

    public var description: String {
        switch self {
        case .plugin(let p): "plugin:\(p)"
        case .client(let c): "client:\(c)"
        case .layout(let l): "layout:\(l)"
        case .system: "system"
        }
    }
}

/// What kind of change happened to a device; `shape` changes wake `devices()` observers,
/// `attributes` changes wake device and device-type subscriptions only.
public enum DeviceChangeKind: Hashable, Sendable {
    case added
    /// Name, room, structure, commissioning, connectivity, or the set of types or traits.
    case shape
    /// Attribute values only.
    case attributes
    case removed
}

extension HomeChange {
    /// The origin a change has when the caller names none: a driver's input is its plugin's.
    var defaultOrigin: ChangeOrigin {
        switch self {
        case .publish(let p, _), .remove(let p, _), .report(let p, _, _), .event(let p, _, _), .connectivity(let p, _, _),
            .traitConnectivity(let p, _, _, _, _):
            .plugin(p)
        case .layout, .layoutEdits: .layout("unknown")
        case .restore: .system
        }
    }
}

/// One accepted change, for audit: its version, who caused it, and what it touched.
public struct ChangeRecord: Sendable, Hashable {
    public let version: UInt64
    public let origin: ChangeOrigin
    public let devices: [DeviceID: DeviceChangeKind]
    public let structuresChanged: Bool
    public let roomsChanged: Bool
    public let events: Int

    init(_ outcome: HomeOutcome) {
        version = outcome.version
        origin = outcome.origin
        devices = Dictionary(outcome.devices.map { ($0.0, $0.1) }, uniquingKeysWith: { _, last in last })
        structuresChanged = outcome.structuresChanged
        roomsChanged = outcome.roomsChanged
        events = outcome.events.count
    }
}
