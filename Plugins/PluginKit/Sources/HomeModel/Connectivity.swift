/// Whether the source of a trait's data can currently be reached (Google Home APIs
/// `ConnectivityState`).
public enum ConnectivityState: String, Hashable, Sendable, Codable, CaseIterable {
    case online, offline, partiallyOnline, unknown

    var bit: UInt8 {
        switch self {
        case .online: 1
        case .offline: 2
        case .partiallyOnline: 4
        case .unknown: 8
        }
    }
}

/// Where a trait's data comes from (Google Home APIs `DataSourceLocality`).
public enum DataSourceLocality: String, Hashable, Sendable, Codable, CaseIterable {
    case local, remote, peerToPeer, mixed, unspecified

    var bit: UInt8 {
        switch self {
        case .local: 1
        case .remote: 2
        case .peerToPeer: 4
        case .mixed: 8
        case .unspecified: 16
        }
    }
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
        // Bit sets over the enums' cases (no Set: `/metrics` aggregates every device of the
        // home on each scrape, the change paths once per changed device).
        var states: UInt8 = 0
        var localities: UInt8 = 0
        for p in parts {
            states |= p.connectivityState.bit
            if p.dataSourceLocality != .unspecified { localities |= p.dataSourceLocality.bit }
        }
        let known = states & ~ConnectivityState.unknown.bit
        let state: ConnectivityState
        if known == 0 {
            state = .unknown
        } else if known == ConnectivityState.online.bit {
            state = .online
        } else if known == ConnectivityState.offline.bit {
            state = .offline
        } else {
            state = .partiallyOnline
        }
        let locality: DataSourceLocality
        if localities == 0 {
            locality = .unspecified
        } else if localities & (localities - 1) == 0 {
            locality = DataSourceLocality.allCases.first { $0.bit == localities }!
        } else {
            locality = .mixed
        }
        return SourceConnectivity(connectivityState: state, dataSourceLocality: locality)
    }
}
