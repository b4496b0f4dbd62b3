import CoreMetrics
import Foundation
import HomeCore
import HomeModel
import Prometheus
#if canImport(Glibc)
import Glibc
#endif

/// hearthd's Prometheus registry: swift-metrics is bootstrapped with it, so the core's, the
/// plugin host's and the plugins' counters land here, and `/metrics` renders it.
///
/// Gauges that describe the moment (process memory, devices) are read when scraped.
final class DaemonMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory
    let residentMemory: Gauge
    let virtualMemory: Gauge
    let openFileDescriptors: Gauge
    let startTime: Gauge
    let devices: Gauge
    let commissionedDevices: Gauge
    let offlineDevices: Gauge

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        residentMemory = registry.makeGauge(name: "process_resident_memory_bytes", help: "Resident set size of hearthd.")
        virtualMemory = registry.makeGauge(name: "process_virtual_memory_bytes", help: "Virtual memory size of hearthd.")
        openFileDescriptors = registry.makeGauge(name: "process_open_fds", help: "Open file descriptors of hearthd.")
        startTime = registry.makeGauge(name: "process_start_time_seconds", help: "When hearthd started, in seconds since the Unix epoch.")
        devices = registry.makeGauge(name: "hearth_devices", help: "Devices the core holds, discovered and commissioned.")
        commissionedDevices = registry.makeGauge(name: "hearth_devices_commissioned", help: "Devices commissioned into the home.")
        offlineDevices = registry.makeGauge(name: "hearth_devices_offline", help: "Devices whose every trait is offline.")
        startTime.set(to: Date().timeIntervalSince1970)
    }

    /// The metrics in Prometheus' text format, with the moment's gauges read first.
    func render(core: HomeCore) -> [UInt8] {
        if let memory = Self.memory() {
            residentMemory.set(to: Double(memory.resident))
            virtualMemory.set(to: Double(memory.virtual))
        }
        if let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") { openFileDescriptors.set(to: Double(fds.count)) }
        var all = 0, commissioned = 0, offline = 0
        for device in core.state.devices.values {
            all += 1
            if device.commissioning == .commissioned { commissioned += 1 }
            if device.sourceConnectivity.connectivityState == .offline { offline += 1 }
        }
        devices.set(to: Double(all))
        commissionedDevices.set(to: Double(commissioned))
        offlineDevices.set(to: Double(offline))
        return registry.emitToBuffer()
    }

    /// Resident and virtual size from `/proc/self/statm` (in pages there).
    static func memory() -> (resident: Int, virtual: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count >= 2 else { return nil }
        let page = sysconf(Int32(_SC_PAGESIZE))
        return (fields[1] * page, fields[0] * page)
    }
}
