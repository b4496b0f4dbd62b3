import Logging
import PluginHost
import ServiceLifecycle

/// Gives the code pages hearthd touched while starting back to the page cache
/// (``ResidentCode/release()``): once when start-up is over, and once more after the first
/// plugins' discovery and the first clients have come and gone. What runs afterwards faults
/// its pages back in; the rest stays out of hearthd's resident memory.
struct ResidentCodeService<C: Clock>: Service where C.Duration == Duration {
    /// After the start, when to release (each a delay from the start).
    var after: [Duration] = [.seconds(2), .seconds(30)]
    let clock: C
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            let start = clock.now
            for delay in after {
                do {
                    try await clock.sleep(until: start.advanced(by: delay), tolerance: .milliseconds(100))
                } catch {
                    return
                }
                let released = ResidentCode.release()
                logger.debug(
                    "released resident code pages",
                    metadata: [
                        "after": "\(delay)", "mappings": "\(released.mappings)", "KiB": "\(released.bytes / 1024)",
                        "files": "\(released.files.joined(separator: ","))",
                    ])
            }
        }
        // A service that returns early would end the group (and hearthd); wait for shutdown instead.
        try? await gracefulShutdown()
    }
}
