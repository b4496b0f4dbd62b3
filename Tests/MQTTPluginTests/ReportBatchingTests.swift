import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Synchronization
import TestSupport
import Testing

@testable import MQTTPlugin

/// Reports of messages read back to back reach the host in batches (issue 22): none is lost,
/// the order is kept, and a lone message is handed over at once.
@Suite struct ReportBatchingTests {
    /// A host that records every `report` call and forwards it (to a real core, when given).
    final class RecordingContext: DriverContext {
        let pluginID = "mqtt"
        let configuration: PluginConfiguration
        let forward: (any DriverContext)?
        let calls = Mutex<[[AttributeReport]]>([])
        /// When set, every `report` waits until it is opened (signalled; it stays open), 5 s at most.
        let gate: DispatchSemaphore?
        init(configuration: PluginConfiguration = PluginConfiguration(value: .object([:]), file: "test", keyPath: "plugins.mqtt"), forward: (any DriverContext)? = nil, gated: Bool = false) {
            self.configuration = configuration
            self.forward = forward
            self.gate = gated ? DispatchSemaphore(value: 0) : nil
        }
        func publish(_ device: DeviceDescription) { forward?.publish(device) }
        func remove(device localID: String) { forward?.remove(device: localID) }
        func report(_ reports: [AttributeReport]) {
            if let gate {
                // Bounded: a batcher that wrongly hands over on the caller's thread fails the
                // test's expectations after 5 s instead of hanging it.
                _ = gate.wait(timeout: .now() + 5)
                gate.signal()
            }
            calls.withLock { $0.append(reports) }
            forward?.report(reports)
        }
        func emit(_ event: EventReport) { forward?.emit(event) }
        func setConnectivity(_ state: ConnectivityState, device localID: String?) { forward?.setConnectivity(state, device: localID) }
        func log(_ level: LogLevel, _ message: String, device localID: String?) {}
        func count(_ name: String, by amount: Int) {}
        var reports: [AttributeReport] { calls.withLock { $0.flatMap { $0 } } }
    }

    static func report(_ i: Int) -> AttributeReport {
        AttributeReport(
            localID: "t\(i % 3)", deviceType: nil, trait: TemperatureMeasurementTrait.identifier,
            attribute: TemperatureMeasurementTrait.Attribute.measuredValue, value: .int(Int64(i)))
    }

    @Test func reports_gather_while_more_input_waits_and_go_in_order() {
        let host = RecordingContext()
        let batcher = ReportBatcher(context: host, limit: 100)
        for i in 0..<10 { batcher.add([Self.report(i)], more: true) }
        #expect(host.calls.withLock { $0.isEmpty }, "nothing handed over while more input waits")
        batcher.add([Self.report(10)], more: false)
        #expect(host.calls.withLock { $0.count } == 1, "one hand-over for the burst")
        #expect(host.reports.map(\.value) == (0...10).map { .int(Int64($0)) })
        // A lone message goes at once.
        batcher.add([Self.report(11)], more: false)
        #expect(host.calls.withLock { $0.last?.map(\.value) } == [.int(11)])
        // The end of a burst (the connection's caughtUp) hands over what gathered.
        for i in 12..<15 { batcher.add([Self.report(i)], more: true) }
        batcher.flush()
        #expect(host.calls.withLock { $0.last?.map(\.value) } == (12..<15).map { .int(Int64($0)) })
        batcher.flush()
        #expect(host.calls.withLock { $0.count } == 3, "flushing nothing hands nothing over")
    }

    @Test func a_batch_is_bounded() {
        let host = RecordingContext()
        let batcher = ReportBatcher(context: host, limit: 50)
        for i in 0..<120 { batcher.add([Self.report(i)], more: true) }
        #expect(host.calls.withLock { $0.map(\.count) } == [50, 50], "at most `limit` reports wait")
        batcher.flush()
        #expect(host.reports.map(\.value) == (0..<120).map { .int(Int64($0)) })
    }

    /// A flood's batch goes through the batcher's queue: the burst's end returns while the host
    /// still applies it (the network thread reads on), a small batch behind it joins the queue
    /// (order kept), and `flush` — before any other effect — returns only once all arrived.
    @Test func a_large_batch_is_handed_over_while_the_network_thread_reads_on() async {
        let host = RecordingContext(gated: true)
        let batcher = ReportBatcher(context: host, limit: 100, queueAtLeast: 10)
        for i in 0..<20 { batcher.add([Self.report(i)], more: true) }
        batcher.endOfBurst()  // returns: the host is still held at its gate
        #expect(host.calls.withLock { $0.isEmpty })
        for i in 20..<23 { batcher.add([Self.report(i)], more: true) }
        batcher.endOfBurst()  // small, but behind a queued batch: queued too
        #expect(host.calls.withLock { $0.isEmpty })
        let flushed = Flag()
        Thread {
            batcher.flush()
            flushed.set()
        }.start()
        try? await Task.sleep(for: .milliseconds(50))
        let early = flushed.isSet
        #expect(!early, "flush waits for the queued batches")
        host.gate?.signal()
        await waitUntil { flushed.isSet }
        let late = flushed.isSet
        #expect(late)
        #expect(host.calls.withLock { $0.map(\.count) } == [20, 3])
        #expect(host.reports.map(\.value) == (0..<23).map { .int(Int64($0)) })
        // A lone message (paced) goes on the caller's thread, at once.
        batcher.add([Self.report(23)], more: true)
        batcher.endOfBurst()
        #expect(host.calls.withLock { $0.last?.map(\.value) } == [.int(23)])
    }

    /// At most `maximumQueued` batches wait on the queue: the next burst's end waits for them
    /// (back-pressure), then every report arrives, in order.
    @Test func the_queue_is_bounded() async {
        let host = RecordingContext(gated: true)
        let batcher = ReportBatcher(context: host, limit: 100, queueAtLeast: 10)
        let bursts = ReportBatcher.maximumQueued + 1
        let done = Flag()
        Thread {
            for b in 0..<bursts {
                for i in 0..<10 { batcher.add([Self.report(b * 10 + i)], more: true) }
                batcher.endOfBurst()
            }
            done.set()
        }.start()
        await waitUntil { batcher.queued.load(ordering: .acquiring) == ReportBatcher.maximumQueued }
        try? await Task.sleep(for: .milliseconds(20))
        let queued = batcher.queued.load(ordering: .acquiring)
        #expect(queued == ReportBatcher.maximumQueued, "no more than the bound queued")
        let early = done.isSet
        #expect(!early, "the burst beyond the queue's bound waits")
        host.gate?.signal()
        await waitUntil { done.isSet }
        batcher.flush()
        #expect(host.reports.map(\.value) == (0..<(bursts * 10)).map { .int(Int64($0)) })
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    /// Waits (bounded: 10 s) until `condition` holds.
    func waitUntil(_ condition: () -> Bool) async {
        for _ in 0..<1000 where !condition() { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// The connection's read loop over a real broker: every message is followed by a
    /// `caughtUp` (what a burst gathered is handed over, none waits for a next message), a
    /// burst is bounded, and a publication from another thread is written at once (the wake).
    @Test func the_connection_calls_caught_up_after_every_burst() async throws {
        let broker = try await MosquittoBroker(extraConfig: "max_queued_messages 0")
        defer { broker.stop() }
        enum Event: Equatable { case message(Int), caughtUp }
        let events = Mutex<[Event]>([])
        let (connected, connectedContinuation) = AsyncStream<Void>.makeStream()
        var handlers = MQTTConnection.Handlers()
        handlers.connected = { connectedContinuation.yield() }
        handlers.message = { _, payload, _ in
            if let n = Int(String(decoding: payload, as: UTF8.self)) { events.withLock { $0.append(.message(n)) } }
        }
        handlers.caughtUp = { events.withLock { if $0.last != .caughtUp { $0.append(.caughtUp) } } }
        let reader = try MQTTConnection(options: .init(host: "127.0.0.1", port: broker.port, clientID: "burst-reader"), handlers: handlers)
        try reader.start()
        defer { reader.stop() }
        for await _ in connected { break }
        try reader.subscribe("burst/#", qos: 0)
        let device = try DeviceClient(port: broker.port)
        try await device.start()
        defer { device.stop() }
        // The subscription is live once a probe comes back.
        _ = try await within(10, "the subscription") { () async -> Bool in
            while !Task.isCancelled, !events.withLock({ $0.contains(.message(-1)) }) {
                _ = try? device.connection.publish("burst/probe", payload: "-1", qos: 0)
                try? await Task.sleep(for: .milliseconds(20))
            }
            return true
        }
        let messages = 3_000
        for i in 0..<messages {
            while true {
                do {
                    try device.connection.publish("burst/\(i % 7)", payload: "\(i)", qos: 0)
                    break
                } catch {
                    try await Task.sleep(for: .microseconds(50))
                }
            }
        }
        _ = try await within(30, "every message read and a caughtUp after the last") { () async -> Bool in
            while !Task.isCancelled, events.withLock({ $0.last != .caughtUp || !$0.contains(.message(messages - 1)) }) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return true
        }
        let seen = events.withLock { $0 }
        let numbers = seen.compactMap { if case .message(let n) = $0, n >= 0 { n } else { nil } }
        #expect(numbers == Array(0..<messages), "every message once, in order")
        var run = 0
        var longest = 0
        for event in seen {
            if case .message = event { run += 1 } else { run = 0 }
            longest = max(longest, run)
        }
        #expect(longest <= MQTTConnection.burst, "a burst of \(longest) messages before a caughtUp")
    }

    /// The read loop runs libmosquitto's keepalive: an idle connection pings and stays up over
    /// more than two keepalive periods (the broker drops a client silent for 1.5 of them), and
    /// a message after the idle time still arrives.
    @Test(.timeLimit(.minutes(1))) func an_idle_connection_keeps_alive() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let events = Mutex<[String]>([])
        let (connected, connectedContinuation) = AsyncStream<Void>.makeStream()
        var handlers = MQTTConnection.Handlers()
        handlers.connected = {
            events.withLock { $0.append("connected") }
            connectedContinuation.yield()
        }
        handlers.disconnected = { _, reason in events.withLock { $0.append("disconnected: \(reason)") } }
        handlers.message = { _, payload, _ in events.withLock { $0.append(String(decoding: payload, as: UTF8.self)) } }
        var options = MQTTConnection.Options(host: "127.0.0.1", port: broker.port, clientID: "idle-reader")
        options.keepalive = 5  // libmosquitto's smallest
        let reader = try MQTTConnection(options: options, handlers: handlers)
        try reader.start()
        defer { reader.stop() }
        for await _ in connected { break }
        try reader.subscribe("idle/#", qos: 1)
        try await Task.sleep(for: .seconds(12))
        try await broker.mosquittoPub("idle/x", "after the idle time")
        _ = try await within(10, "the message after the idle time") { () async -> Bool in
            while !Task.isCancelled, !events.withLock({ $0.contains("after the idle time") }) { try? await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        #expect(events.withLock { $0 } == ["connected", "after the idle time"], "no drop while idle")
    }

    @Test func another_effect_hands_over_the_reports_before_it() {
        let host = RecordingContext()
        let runtime = Runtime(context: host, registry: Registry())
        runtime.perform([.report([Self.report(1)])], moreInput: true)
        #expect(host.calls.withLock { $0.isEmpty })
        runtime.perform([.count("x")], moreInput: true)
        #expect(host.reports.map(\.value) == [.int(1)], "reports before a later effect are handed over first")
    }

    /// A real broker and a flood over 50 discovered sensors into a real core: every message's
    /// report reaches the host (the count equals what was sent) and each sensor ends on its
    /// last value.
    @Test func a_flood_through_a_broker_loses_no_report() async throws {
        let broker = try await MosquittoBroker(extraConfig: "max_queued_messages 0")
        defer { broker.stop() }
        let core = HomeCore()
        let configuration = PluginConfiguration(value: BrokerIntegrationTests.configuration(broker), file: "hearth.yaml", keyPath: "plugins.mqtt")
        let host = RecordingContext(configuration: configuration, forward: core.context(for: "mqtt", configuration: configuration))
        let plugin = MQTTPlugin()
        let run = Task { try await plugin.run(context: host) }
        defer { run.cancel() }
        let device = try DeviceClient(port: broker.port)
        try await device.start()
        defer { device.stop() }
        let sensors = 50
        for s in 0..<sensors {
            try device.publish(
                "homeassistant/sensor/flood/t\(s)/config",
                #"{"stat_t": "flood/t/\#(s)", "val_tpl": "{{ value_json.t }}", "dev_cla": "temperature", "unit_of_meas": "°C", "uniq_id": "flood-t\#(s)"}"#,
                retain: true)  // retained: the plugin may subscribe to discovery after this
        }
        _ = try await within(30, "every sensor's state topic subscribed") { () async -> Bool in
            while !Task.isCancelled, (0..<sensors).contains(where: { !plugin.acknowledgedSubscriptions.contains("flood/t/\($0)") }) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return true
        }
        let before = host.reports.count
        let messages = 5_000
        for i in 0..<messages {
            let payload = #"{"t":\#(Double(i / sensors) / 100)}"#
            while true {
                do {
                    try device.connection.publish("flood/t/\(i % sensors)", payload: payload, qos: 0)
                    break
                } catch {
                    try await Task.sleep(for: .microseconds(50))  // the client's queue is full: let it drain
                }
            }
        }
        let last = Int64(messages / sensors - 1)
        let system = core.home(for: .system)
        _ = try await within(60, "every sensor's last value in the core") { () async -> Bool in
            while !Task.isCancelled, (0..<sensors).contains(where: { s in
                (try? system.currentDevice(id: DeviceID(plugin: "mqtt", local: "flood-t\(s)")))?.types
                    .current(TemperatureSensorDeviceType.self)?.matterTraits.temperatureMeasurementTrait?.attributes.measuredValue.map(Int64.init) != last
            }) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return true
        }
        try await Task.sleep(for: .milliseconds(50))  // nothing more may come
        let reports = host.reports.count - before
        let calls = host.calls.withLock { $0.count }
        #expect(reports == messages, "every message's report reached the host (\(reports) of \(messages), in \(calls) calls)")
    }
}
