import Foundation
import Logging
import Synchronization

/// Where a bridge's `_hap._tcp` record goes: avahi (``HAPBridge`` default), or a recorder in tests.
public protocol HAPAdvertising: Sendable {
    /// Publishes (or replaces) the record of the bridge called `name`.
    func publish(name: String, port: Int, txt: [(String, String)])
    /// Withdraws the records this advertiser published.
    func stop()
}

/// Publishes `_hap._tcp` through the system's avahi daemon, by running `avahi-publish-service`
/// (avahi-utils) for as long as the record should exist; a new TXT record replaces the process.
/// Without avahi (no binary, no daemon) it logs once and the bridge still works by IP.
final class Advertiser: HAPAdvertising {
    let logger: Logger
    let process = Mutex<Process?>(nil)

    init(logger: Logger) { self.logger = logger }

    static func binary() -> String? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: dir + "/avahi-publish-service") {
            return dir + "/avahi-publish-service"
        }
        return nil
    }

    func publish(name: String, port: Int, txt: [(String, String)]) {
        guard let binary = Self.binary() else {
            logger.warning("HAP: avahi-publish-service not found (apt install avahi-utils); not advertising _hap._tcp, pair by IP")
            return
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["-s", name, "_hap._tcp", String(port)] + txt.map { "\($0.0)=\($0.1)" }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        let old = process.withLock { current in
            defer { current = p }
            return current
        }
        if let old, old.isRunning { old.terminate() }
        do {
            try p.run()
            logger.info("HAP: advertising _hap._tcp through avahi", metadata: ["txt": "\(txt.map { "\($0.0)=\($0.1)" }.joined(separator: " "))"])
        } catch {
            logger.warning("HAP: avahi-publish-service failed to start: \(error)")
        }
    }

    func stop() {
        let p = process.withLock { current in
            defer { current = nil }
            return current
        }
        if let p, p.isRunning {
            p.terminate()
            p.waitUntilExit()
        }
    }
}
