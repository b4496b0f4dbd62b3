import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Publishes DNS-SD services through the system's avahi daemon, by running
/// `avahi-publish-service` (avahi-utils) for as long as a record should exist; publishing again
/// under the same key replaces the record. Shared by the HAP bridge (`_hap._tcp`) and Matter
/// (`_matterc._udp`, `_matter._tcp` with subtypes).
///
/// ```swift
/// let advertiser = DNSSDAdvertiser()
/// try advertiser.publish(key: "hap", name: "Hearth", type: "_hap._tcp", port: 51826, txt: [("c#", "1")])
/// advertiser.stop()
/// ```
public final class DNSSDAdvertiser: Sendable {
    let processes = Mutex<[String: Process]>([:])
    let queue = DispatchQueue(label: "hearth.dnssd")
    let binaryPath: String?
    let daemonSocket: String

    /// - Parameters:
    ///   - binaryPath: `avahi-publish-service`, found in the usual directories when nil.
    ///   - daemonSocket: the socket a running avahi-daemon creates.
    public init(binaryPath: String? = nil, daemonSocket: String = "/run/avahi-daemon/socket") {
        self.binaryPath = binaryPath ?? Self.binary()
        self.daemonSocket = daemonSocket
    }

    static func binary() -> String? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: dir + "/avahi-publish-service") {
            return dir + "/avahi-publish-service"
        }
        return nil
    }

    /// Why publishing cannot work here, or nil when avahi looks usable.
    public var unavailableReason: String? {
        guard let binaryPath, FileManager.default.isExecutableFile(atPath: binaryPath) else {
            return "avahi-publish-service not found: install avahi-utils and avahi-daemon (apt install avahi-utils avahi-daemon)"
        }
        guard FileManager.default.fileExists(atPath: daemonSocket) else {
            return "avahi-daemon is not running (no \(daemonSocket)): start dbus-daemon --system and avahi-daemon"
        }
        return nil
    }

    /// The arguments for one service (exposed for tests): subtypes as full `_X._sub.<type>` names.
    public static func arguments(name: String, type: String, subtypes: [String], port: UInt16, txt: [(String, String)]) -> [String] {
        subtypes.map { "--subtype=\($0)._sub.\(type)" } + ["-s", name, type, String(port)] + txt.map { "\($0.0)=\($0.1)" }
    }

    /// Publishes (or replaces) the service under `key`.
    /// - Throws: ``DNSSDAdvertiserError`` saying what to install or start when avahi is missing.
    public func publish(key: String, name: String, type: String, subtypes: [String] = [], port: UInt16, txt: [(String, String)])
        throws(DNSSDAdvertiserError)
    {
        if let reason = unavailableReason { throw DNSSDAdvertiserError(reason) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binaryPath ?? "")
        p.arguments = Self.arguments(name: name, type: type, subtypes: subtypes, port: port, txt: txt)
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        // The old record's process must be gone before the new one registers the same name, and
        // waiting for it must not hold the caller (a task of the concurrency pool, a HAP
        // connection): the swap happens in order on the advertiser's own queue.
        queue.async { [self] in
            let old = processes.withLock { $0.removeValue(forKey: key) }
            if let old, old.isRunning {
                Self.end(old)
                old.waitUntilExit()
            }
            guard (try? p.run()) != nil else { return }
            processes.withLock { $0[key] = p }
        }
    }

    /// Ends a record's process with SIGKILL: a process spawned from a thread that blocks
    /// signals (a dispatch queue's) inherits the mask and would never see SIGTERM; avahi-daemon
    /// withdraws a killed client's records all the same.
    static func end(_ p: Process) {
        kill(p.processIdentifier, SIGKILL)
    }

    /// Withdraws the service under `key`, if any.
    public func withdraw(key: String) {
        queue.sync {}
        let p = processes.withLock { $0.removeValue(forKey: key) }
        if let p, p.isRunning {
            Self.end(p)
            p.waitUntilExit()
        }
    }

    /// Withdraws everything.
    public func stop() {
        queue.sync {}
        let all = processes.withLock { table in
            defer { table = [:] }
            return Array(table.values)
        }
        for p in all where p.isRunning {
            Self.end(p)
            p.waitUntilExit()
        }
    }
}

/// Why a service could not be published, in words a person can act on.
public struct DNSSDAdvertiserError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
