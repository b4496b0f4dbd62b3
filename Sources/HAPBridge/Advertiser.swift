import HAP
import Logging

/// Where a bridge's `_hap._tcp` record goes: avahi (``HAPBridge`` default), or a recorder in tests.
public protocol HAPAdvertising: Sendable {
    /// Publishes (or replaces) the record of the bridge called `name`.
    func publish(name: String, port: Int, txt: [(String, String)])
    /// Withdraws the records this advertiser published.
    func stop()
}

/// Publishes `_hap._tcp` through the shared ``DNSSDAdvertiser`` (avahi); a new TXT record
/// replaces the old one. Without avahi (no binary, no daemon) it logs why and the bridge still
/// works by IP.
final class Advertiser: HAPAdvertising {
    let logger: Logger
    let dnssd = DNSSDAdvertiser()

    init(logger: Logger) { self.logger = logger }

    func publish(name: String, port: Int, txt: [(String, String)]) {
        do {
            try dnssd.publish(key: "hap " + name, name: name, type: "_hap._tcp", port: UInt16(clamping: port), txt: txt)
            logger.info("HAP: advertising _hap._tcp through avahi", metadata: ["txt": "\(txt.map { "\($0.0)=\($0.1)" }.joined(separator: " "))"])
        } catch {
            logger.warning("HAP: not advertising _hap._tcp (\(error)); pair by IP")
        }
    }

    func stop() { dnssd.stop() }
}
