/// Whether the source of a trait's data can currently be reached (Google Home APIs
/// `ConnectivityState`).
public enum ConnectivityState: String, Hashable, Sendable, Codable, CaseIterable {
    case online, offline, partiallyOnline, unknown
}

/// Where a trait's data comes from (Google Home APIs `DataSourceLocality`).
public enum DataSourceLocality: String, Hashable, Sendable, Codable, CaseIterable {
    case local, remote, peerToPeer, mixed, unspecified
}

/// Connectivity and locality of a trait, or aggregated over a device type or a device.
public struct SourceConnectivity: Hashable, Sendable, Codable {
    public var connectivityState: ConnectivityState
    public var dataSourceLocality: DataSourceLocality

    public init(connectivityState: ConnectivityState, dataSourceLocality: DataSourceLocality = .local) {
        self.connectivityState = connectivityState
        self.dataSourceLocality = dataSourceLocality
    }

    public static let unknown = SourceConnectivity(connectivityState: .unknown, dataSourceLocality: .unspecified)

    /// Aggregates the connectivity of parts (traits of a device type, types of a device).
    ///
    /// All online → online; all offline → offline; some online and some offline (or
    /// partially online) → partiallyOnline; nothing known → unknown. Localities that agree
    /// keep their value; local and remote together → mixed.
    public static func aggregate(_ parts: some Sequence<SourceConnectivity>) -> SourceConnectivity {
        // Flags, not Sets: `/metrics` aggregates every device of the home on each scrape, the
        // change paths once per changed device.
        var online = false, offline = false, partial = false
        var locality = DataSourceLocality.unspecified
        for p in parts {
            switch p.connectivityState {
            case .online: online = true
            case .offline: offline = true
            case .partiallyOnline: partial = true
            case .unknown: break
            }
            if p.dataSourceLocality == .unspecified || p.dataSourceLocality == locality { continue }
            locality = locality == .unspecified ? p.dataSourceLocality : .mixed
        }
        let state: ConnectivityState =
            partial || (online && offline) ? .partiallyOnline : online ? .online : offline ? .offline : .unknown
        return SourceConnectivity(connectivityState: state, dataSourceLocality: locality)
    }
}
