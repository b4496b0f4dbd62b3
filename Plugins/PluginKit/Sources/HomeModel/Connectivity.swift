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
        var states = Set<ConnectivityState>()
        var localities = Set<DataSourceLocality>()
        for p in parts {
            states.insert(p.connectivityState)
            if p.dataSourceLocality != .unspecified { localities.insert(p.dataSourceLocality) }
        }
        let known = states.subtracting([.unknown])
        let state: ConnectivityState
        if known.isEmpty {
            state = .unknown
        } else if known == [.online] {
            state = .online
        } else if known == [.offline] {
            state = .offline
        } else {
            state = .partiallyOnline
        }
        let locality: DataSourceLocality
        switch localities.count {
        case 0: locality = .unspecified
        case 1: locality = localities.first!
        default: locality = .mixed
        }
        return SourceConnectivity(connectivityState: state, dataSourceLocality: locality)
    }
}
