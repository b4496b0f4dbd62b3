import HomeStorage
import ServiceLifecycle

/// Runs the ``OutputRestorer`` as a service: it ends by itself once every output in the plan
/// has been restored, or at shutdown.
struct RestoreService: Service {
    let restorer: OutputRestorer

    func run() async throws {
        _ = await cancelWhenGracefulShutdown {
            await restorer.run()
        }
        // A service that returns early would end the group; wait for shutdown instead.
        try? await gracefulShutdown()
    }
}
