import DriverAPI
import HomeCore
import HomeModel
import Prometheus
import Testing

/// The core's metrics, read back from a real Prometheus registry as `/metrics` would render it.
@Suite struct MetricsTests {
    let registry = PrometheusCollectorRegistry()
    let core: HomeCore
    var home: Home { core.home(for: .system) }

    init() {
        core = HomeCore(metrics: HomeMetrics(factory: PrometheusMetricsFactory(registry: registry)))
    }

    /// The value of one series in the rendered text, e.g. `hearth_reports_total{plugin="p"}`; nil when absent.
    func value(_ series: String) -> Double? {
        for line in registry.emitToString().split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test func reportsAndEventsCountPerPlugin_andRejectedInputIsCounted() {
        let p = core.context(for: "p")
        let q = core.context(for: "q")
        p.publish(Fixtures.thermometer())
        p.report([
            AttributeReport(localID: "thermo", trait: TemperatureMeasurementTrait.identifier, attribute: TemperatureMeasurementTrait.Attribute.measuredValue, value: 2100),
            AttributeReport(localID: "thermo", trait: RelativeHumidityMeasurementTrait.identifier, attribute: RelativeHumidityMeasurementTrait.Attribute.measuredValue, value: 4000),
        ])
        q.publish(Fixtures.button())
        q.emit(EventReport(localID: "button", trait: SwitchTrait.identifier, event: SwitchTrait.Event.initialPress, fields: ["NewPosition": 1]))
        #expect(value(#"hearth_reports_total{plugin="p"}"#) == 2)
        #expect(value(#"hearth_reports_total{plugin="q"}"#) == 0)
        #expect(value(#"hearth_events_total{plugin="q"}"#) == 1)
        // A value of the wrong type is refused by the core, and counted.
        p.report("thermo", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, "warm")
        #expect(value(#"hearth_rejected_inputs_total{plugin="p"}"#) == 1)
    }

    @Test func pluginCountersBecomeTheirOwnMetric_andCoreNamesAreRefused() {
        let mqtt = core.context(for: "mqtt")
        mqtt.count("reconnects")
        mqtt.count("reconnects", by: 2)
        mqtt.count("malformed payloads")
        #expect(value("hearth_mqtt_reconnects_total") == 3)
        #expect(value("hearth_mqtt_malformed_payloads_total") == 1)
        // A plugin called "plugin" may not add to the host's restart counter.
        core.context(for: "plugin").count("restarts")
        #expect(value(#"hearth_plugin_restarts_total{plugin="plugin"}"#) == nil)
        #expect(value("hearth_plugin_restarts_total") == nil)
    }

    @Test func subscribersGoUpAndDown() {
        #expect(value("hearth_subscribers") == 0)
        let devices = home.devices().batched()
        let events = home.events()
        #expect(value("hearth_subscribers") == 2)
        devices.cancel()
        #expect(value("hearth_subscribers") == 1)
        events.cancel()
        events.cancel()  // twice: still one subscription ended
        #expect(value("hearth_subscribers") == 0)
    }

    @Test func anOverflowingStreamCountsAResync() async throws {
        let driver = core.context(for: "p")
        var it = home.devices().stream().makeAsyncIterator()
        _ = await it.next()
        #expect(value("hearth_subscription_resyncs_total") == 0)
        for i in 0..<(HomeCore.streamBufferLimit + 10) {
            driver.publish(Fixtures.lamp("l\(i)", commission: CommissionHint(name: "Lamp \(i)")))
        }
        guard case .snapshot? = await it.next() else { Issue.record("expected a resync snapshot"); return }
        #expect(value("hearth_subscription_resyncs_total") == 1)
    }

    @Test func aSlowEventSubscriberCountsWhatItMissed() async throws {
        let driver = core.context(for: "p")
        driver.publish(Fixtures.button(commission: CommissionHint(name: "Button")))
        let events = home.events(device: "p:button")
        var it = events.makeAsyncIterator()
        let extra = 5
        for _ in 0..<(HomeCore.eventBufferLimit + extra) {
            driver.emit(EventReport(localID: "button", trait: SwitchTrait.identifier, event: SwitchTrait.Event.initialPress, fields: ["NewPosition": 1]))
        }
        _ = await it.next()
        #expect(value("hearth_subscription_dropped_events_total") == Double(extra))
    }

    @Test func commandsAndTheirFailuresAreCounted() async throws {
        let driver = core.context(for: "p")
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        core.setCommandHandler(FakeLampHardware(context: driver), for: "p")
        let on = CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        _ = try await home.invoke(on)
        await #expect(throws: HomeError.self) {
            _ = try await home.invoke(
                CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: 0x77))
        }
        #expect(value(#"hearth_commands_total{plugin="p"}"#) == 2)
        #expect(value(#"hearth_command_failures_total{plugin="p",code="unsupportedOperation"}"#) == 1)
    }
}
