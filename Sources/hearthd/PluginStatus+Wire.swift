import DriverAPI
import HearthAPI
import PluginHost

extension PluginStatus {
    /// The status as the API reports it (`GET /plugins`, `/readyz`): the one place the host's
    /// plugin status becomes a wire value.
    var wire: WirePlugin {
        WirePlugin(
            id: id, name: name, version: version, path: path, state: state.wire, restarts: restarts, lastError: lastError,
            health: health.map { WirePlugin.Health(state: $0.state.wire, reason: $0.reason) })
    }
}

extension PluginHealth.State {
    var wire: WirePlugin.Health.State {
        switch self {
        case .healthy: .healthy
        case .degraded: .degraded
        case .unhealthy: .unhealthy
        }
    }
}

extension PluginStatus.State {
    var wire: WirePlugin.State {
        switch self {
        case .starting: .starting
        case .running: .running
        case .restarting: .restarting
        case .parked: .parked
        case .stopped: .stopped
        case .invalidConfiguration: .invalidConfiguration
        case .refused: .refused
        case .disabled: .disabled
        }
    }
}
