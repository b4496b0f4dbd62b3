public import HearthAPI
import HomeCore
import HomeModel

extension HearthServer {
    /// The current readiness (what `GET /readyz` reports).
    public func readiness() -> Readiness {
        let storage: Result<Void, HomeError>
        do {
            try access.checkReadable()
            storage = .success(())
        } catch {
            storage = .failure(error)
        }
        return Readiness.evaluate(storage: storage, deviceCount: core.state.devices.count, plugins: pluginStatuses())
    }
}
