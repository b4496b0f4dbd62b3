
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
