import Foundation
import Logging
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// Speaks systemd's notify protocol (`Type=notify`) without libsystemd: one datagram per
/// message to the Unix socket named by `$NOTIFY_SOCKET` (a path, or `@name` for the abstract
/// namespace). Without `$NOTIFY_SOCKET` every message is dropped silently.
struct SystemdNotifier: Sendable {
    let socketPath: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Sends one message (`READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=…`).
    /// - Returns: false when there is no socket or the send failed.
    @discardableResult
    func notify(_ message: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in pathBytes.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, length) }
            }
        }
        return sent == bytes.count
    }

    /// The watchdog period systemd asked for (`$WATCHDOG_USEC`), if it is meant for this process.
    static func watchdogInterval(environment: [String: String] = ProcessInfo.processInfo.environment) -> Duration? {
        guard let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"].flatMap(Int32.init), pid != getpid() { return nil }
        return .microseconds(Int64(usec))
    }
}

/// Tells systemd the daemon is ready once the other services were started, pings the watchdog
/// at half its period while running, and says `STOPPING=1` at shutdown.
struct SystemdNotifyService: Service {
    let notifier: SystemdNotifier
    let watchdog: Duration?
    let logger: Logger

    func run() async throws {
        guard notifier.socketPath != nil else {
            try? await gracefulShutdown()
            return
        }
        if notifier.notify("READY=1\nSTATUS=running") {
            logger.info("told systemd the daemon is ready", metadata: ["watchdog": "\(watchdog.map { "\($0)" } ?? "off")"])
        } else {
            logger.warning("could not write to NOTIFY_SOCKET", metadata: ["socket": "\(notifier.socketPath ?? "")"])
        }
        if let watchdog {
            let period = watchdog / 2
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    // The watchdog's own pace: this is the interval systemd asked for, not a wait for a result.
                    try? await Task.sleep(for: period)
                    if Task.isCancelled { break }
                    notifier.notify("WATCHDOG=1")
                }
            }
        } else {
            try? await gracefulShutdown()
        }
        notifier.notify("STOPPING=1")
    }
}
