import DriverAPI
import HomeModel
import Synchronization

/// The context a supervised plugin reports through: the core's, plus the host's part of
/// availability.
///
/// When the plugin goes down the host marks all its devices offline (``markDown()``). The core
/// brings back only the trait a report names, so here a device's first report or event after
/// that brings the whole device online again: the plugin is back and talking about it. A
/// device the plugin sets offline itself stays as the plugin says.
final class SupervisedContext: DriverContext {
    let inner: any DriverContext
    /// Devices the plugin published, and those the host marked offline since.
    let devices = Mutex<(known: Set<String>, down: Set<String>)>(([], []))

    /// What the plugin last said about its health in this run (nil: nothing yet), and who to
    /// tell when it changes (the service, to update its status).
    let health = Mutex<PluginHealth?>(nil)
    let healthChanged = Mutex<(@Sendable () -> Void)?>(nil)

    init(_ inner: any DriverContext) { self.inner = inner }

    func reportHealth(_ health: PluginHealth) {
        let changed = self.health.withLock { h -> Bool in
            defer { h = health }
            return h != health
        }
        if changed { healthChanged.withLock { $0 }?() }
        inner.reportHealth(health)
    }

    /// Forgets the plugin's last health report (its run ended: what it said no longer holds).
    func forgetHealth() {
        let had = health.withLock { h -> Bool in
            defer { h = nil }
            return h != nil
        }
        if had { healthChanged.withLock { $0 }?() }
    }

    var pluginID: String { inner.pluginID }
    var configuration: PluginConfiguration { inner.configuration }

    /// Marks every device of the plugin offline until it reports again.
    func markDown() {
        forgetHealth()
        devices.withLock { $0.down = $0.known }
        inner.setConnectivity(.offline, device: nil)
    }

    func publish(_ device: DeviceDescription) {
        devices.withLock {
            $0.known.insert(device.localID)
            $0.down.remove(device.localID)  // A published description is online.
        }
        inner.publish(device)
    }

    func remove(device localID: String) {
        devices.withLock {
            $0.known.remove(localID)
            $0.down.remove(localID)
        }
        inner.remove(device: localID)
    }

    func report(_ reports: [AttributeReport]) {
        inner.report(reports)
        revive(Set(reports.map(\.localID)))
    }

    func emit(_ event: EventReport) {
        inner.emit(event)
        revive([event.localID])
    }

    func setConnectivity(_ state: ConnectivityState, device localID: String?) {
        devices.withLock { d in
            if let localID { d.down.remove(localID) } else { d.down = [] }
        }
        inner.setConnectivity(state, device: localID)
    }

    /// One trait: the plugin speaks of the device, but the host's "down" mark covers the
    /// device's other traits, so it stays until a report, event or device-wide setting.
    func setConnectivity(_ state: ConnectivityState, device localID: String, trait: TraitID, deviceType: DeviceTypeID?) {
        inner.setConnectivity(state, device: localID, trait: trait, deviceType: deviceType)
    }

    func log(_ level: LogLevel, _ message: String, device localID: String?) { inner.log(level, message, device: localID) }
    func count(_ name: String, by amount: Int) { inner.count(name, by: amount) }

    func revive(_ ids: Set<String>) {
        let back = devices.withLock { d -> Set<String> in
            let back = d.down.intersection(ids)
            d.down.subtract(back)
            return back
        }
        for id in back.sorted() { inner.setConnectivity(.online, device: id) }
    }
}
