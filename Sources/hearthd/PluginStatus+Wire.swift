import HearthAPI
import PluginHost

extension PluginStatus {
    /// The status as the API reports it (`GET /plugins`, `/readyz`): the one place the host's
    /// plugin status becomes a wire value.
    var wire: WirePlugin {
        WirePlugin(id: id, name: name, version: version, path: path, state: state.wire, restarts: restarts, lastError: lastError)
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
