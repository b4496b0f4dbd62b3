public import CoreMetrics
import HashTreeCollections
import HomeModel
import Synchronization

/// The core's counters and gauges, made through a swift-metrics factory (hearthd's is a
/// Prometheus registry served at `/metrics`; without one, swift-metrics' no-op factory).
///
/// Names follow Prometheus practice: counters end in `_total`. Each metric has one fixed set
/// of label names. Per-plugin counters are made once per plugin and kept, so the hot paths
/// (a report, an event) only add to an atomic.
public final class HomeMetrics: Sendable {
    /// The names the core itself uses; a plugin's own counter may not take one of them.
    public static let coreNames: Set<String> = [
        "hearth_reports_total", "hearth_events_total", "hearth_rejected_inputs_total", "hearth_commands_total",
        "hearth_command_failures_total", "hearth_subscribers", "hearth_subscription_resyncs_total",
        "hearth_subscription_dropped_events_total", "hearth_plugin_restarts_total",
    ]

    public let factory: any MetricsFactory
    /// Observers of queries, devices, events and changes that are still subscribed.
    let subscribers: Meter
    /// Times a slow `stream()` subscriber overflowed and was handed a fresh snapshot.
    let resyncs: Counter
    /// Events a slow event subscriber never saw (its buffer dropped the oldest).
    let droppedEvents: Counter
    private let cache = Mutex<[String: Counter]>([:])

    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        subscribers = Meter(label: "hearth_subscribers", factory: factory)
        resyncs = Counter(label: "hearth_subscription_resyncs_total", factory: factory)
        droppedEvents = Counter(label: "hearth_subscription_dropped_events_total", factory: factory)
    }

    /// A counter by name and labels, made on first use and kept.
    public func counter(_ name: String, _ labels: [(String, String)] = []) -> Counter {
        let key = name + labels.map { "|\($0.0)=\($0.1)" }.joined()
        return cache.withLock { cache in
            if let c = cache[key] { return c }
            let c = Counter(label: name, dimensions: labels, factory: factory)
            cache[key] = c
            return c
        }
    }

    /// Attribute values a plugin reported (each value of a batch counts).
    func reports(plugin: String) -> Counter { counter("hearth_reports_total", [("plugin", plugin)]) }
    /// Events a plugin emitted (button presses, alarms).
    func events(plugin: String) -> Counter { counter("hearth_events_total", [("plugin", plugin)]) }
    /// Reports, events or descriptions of a plugin the core refused as malformed.
    func rejected(plugin: String) -> Counter { counter("hearth_rejected_inputs_total", [("plugin", plugin)]) }

    /// A command or attribute write sent to a plugin's device, and how it ended.
    func command(plugin: String, failed code: HomeError.Code?) {
        counter("hearth_commands_total", [("plugin", plugin)]).increment()
        if let code { counter("hearth_command_failures_total", [("plugin", plugin), ("code", code.rawValue)]).increment() }
    }

    /// The plugin host restarted a failed plugin.
    public func pluginRestarted(_ plugin: String) {
        counter("hearth_plugin_restarts_total", [("plugin", plugin)]).increment()
    }

    /// A plugin's own counter (`DriverContext.count`): `hearth_<plugin>_<name>_total`, or nil
    /// when the name is not a metric name or would take one of the core's.
    public func pluginCounter(plugin: String, name: String) -> Counter? {
        func clean(_ s: String) -> String {
            String(s.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        }
        guard !name.isEmpty, name.count <= 64 else { return nil }
        var metric = "hearth_\(clean(plugin))_\(clean(name))"
        if !metric.hasSuffix("_total") { metric += "_total" }
        guard !Self.coreNames.contains(metric) else { return nil }
        return counter(metric)
    }
}

extension HomeCore {
    /// How many devices the core holds, how many are commissioned and how many are offline.
    public func deviceTally() -> (all: Int, commissioned: Int, offline: Int) {
        let state = self.state
        var offline = 0
        for device in state.devices.values where device.sourceConnectivity.connectivityState == .offline { offline += 1 }
        return (state.devices.count, state.commissioned.count, offline)
    }
}
