import HomeStorage
import ServiceLifecycle

/// Runs the ``LastSeenSaver`` as a service: it saves every interval until shutdown, then once more.
struct LastSeenService<C: Clock>: Service where C.Duration == Duration {
    let saver: LastSeenSaver<C>

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await saver.run()
        }
    }
}
