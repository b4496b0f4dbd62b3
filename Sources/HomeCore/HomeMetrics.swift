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
    /// The core's metric names (README "Metrics"), each written once here.
    enum Name {
        static let reports = "hearth_reports_total"
        static let events = "hearth_events_total"
        static let rejected = "hearth_rejected_inputs_total"
        static let commands = "hearth_commands_total"
        static let commandFailures = "hearth_command_failures_total"
        static let subscribers = "hearth_subscribers"
        static let resyncs = "hearth_subscription_resyncs_total"
        static let droppedEvents = "hearth_subscription_dropped_events_total"
        static let pluginRestarts = "hearth_plugin_restarts_total"
    }

    /// The names the core itself uses; a plugin's own counter may not take one of them.
    public static let coreNames: Set<String> = [
        Name.reports, Name.events, Name.rejected, Name.commands, Name.commandFailures, Name.subscribers, Name.resyncs,
        Name.droppedEvents, Name.pluginRestarts,
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
        subscribers = Meter(label: Name.subscribers, factory: factory)
        resyncs = Counter(label: Name.resyncs, factory: factory)
        droppedEvents = Counter(label: Name.droppedEvents, factory: factory)
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
    func reports(plugin: String) -> Counter { counter(Name.reports, [("plugin", plugin)]) }
    /// Events a plugin emitted (button presses, alarms).
    func events(plugin: String) -> Counter { counter(Name.events, [("plugin", plugin)]) }
    /// Reports, events or descriptions of a plugin the core refused as malformed.
    func rejected(plugin: String) -> Counter { counter(Name.rejected, [("plugin", plugin)]) }

    /// A command or attribute write sent to a plugin's device, and how it ended.
    func command(plugin: String, failed code: HomeError.Code?) {
        counter(Name.commands, [("plugin", plugin)]).increment()
        if let code { counter(Name.commandFailures, [("plugin", plugin), ("code", code.rawValue)]).increment() }
    }

    /// The plugin host restarted a failed plugin.
    public func pluginRestarted(_ plugin: String) {
        counter(Name.pluginRestarts, [("plugin", plugin)]).increment()
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
