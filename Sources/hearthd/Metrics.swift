import Foundation
import HomeCore
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
        residentMemory = registry.makeGauge(descriptor: Self.descriptor("process_resident_memory_bytes", "Resident set size of hearthd."))
        virtualMemory = registry.makeGauge(descriptor: Self.descriptor("process_virtual_memory_bytes", "Virtual memory size of hearthd."))
        openFileDescriptors = registry.makeGauge(descriptor: Self.descriptor("process_open_fds", "Open file descriptors of hearthd."))
        startTime = registry.makeGauge(descriptor: Self.descriptor("process_start_time_seconds", "When hearthd started, in seconds since the Unix epoch."))
        devices = registry.makeGauge(descriptor: Self.descriptor("hearth_devices", "Devices the core holds, discovered and commissioned."))
        commissionedDevices = registry.makeGauge(descriptor: Self.descriptor("hearth_devices_commissioned", "Devices commissioned into the home."))
        offlineDevices = registry.makeGauge(descriptor: Self.descriptor("hearth_devices_offline", "Devices whose every trait is offline."))
        startTime.set(to: Date().timeIntervalSince1970)
    }

    private static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// The metrics in Prometheus' text format, with the moment's gauges read first.
    func render(core: HomeCore) -> [UInt8] {
        if let memory = Self.memory() {
            residentMemory.set(to: Double(memory.resident))
            virtualMemory.set(to: Double(memory.virtual))
        }
        if let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") { openFileDescriptors.set(to: Double(fds.count)) }
        let tally = core.deviceTally()
        devices.set(to: Double(tally.all))
        commissionedDevices.set(to: Double(tally.commissioned))
        offlineDevices.set(to: Double(tally.offline))
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
