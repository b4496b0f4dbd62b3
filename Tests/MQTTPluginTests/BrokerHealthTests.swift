import DriverAPI
import DriverTesting
import Foundation
import HomeModel
import TestSupport
import Testing
@testable import MQTTPlugin

/// The plugin's health (`DriverContext.reportHealth`, shown by `/readyz`): the pure
/// `BrokerHealth` on made-up instants, then the plugin against a real mosquitto that is stopped
/// and started again.
@Suite struct BrokerHealthTests {
    typealias Health = BrokerHealth<ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    @Test func connecting_isUnhealthy_thenConnected_isHealthy_andRepeatsReportNothing() {
        var h = Health(endpoint: "127.0.0.1:1883")
        #expect(h.connecting(at: t0) == .unhealthy("connecting to the MQTT broker at 127.0.0.1:1883"))
        #expect(h.connected(at: t0 + .seconds(1)) == .healthy("connected to the MQTT broker at 127.0.0.1:1883"))
        #expect(h.connected(at: t0 + .seconds(2)) == nil, "no change, nothing to report")
        #expect(h.tick(at: t0 + .seconds(100)) == nil)
    }

    @Test func refusedAndUnreachable_sayWhy() {
        var h = Health(endpoint: "b:1883")
        _ = h.connecting(at: t0)
        #expect(h.unreachable("connection refused", at: t0) == .unhealthy("cannot reach the MQTT broker at b:1883: connection refused"))
        #expect(h.unreachable("connection refused", at: t0 + .seconds(1)) == nil)
        #expect(h.refused("not authorised", at: t0 + .seconds(2)) == .unhealthy("the MQTT broker at b:1883 refused the connection: not authorised"))
        #expect(h.tick(at: t0 + .seconds(3)) == nil, "still down: the last reason stands")
    }

    @Test func aBrokerThatKeepsDroppingTheConnection_staysUnhealthyWhileConnected_untilTheDropsAgeOut() {
        var h = Health(endpoint: "b:1883", flapLimit: 3, window: .seconds(60))
        _ = h.connecting(at: t0)
        _ = h.connected(at: t0)
        // Two drops: each is unhealthy while it lasts, healthy again on reconnecting.
        for i in 1...2 {
            let at = t0 + .seconds(i * 2)
            #expect(h.lost("malformed packet", expected: false, at: at)?.state == .unhealthy)
            #expect(h.connected(at: at + .milliseconds(500))?.state == .healthy)
        }
        // The third within the minute: connected again, but still unhealthy, and it says why.
        _ = h.lost("malformed packet", expected: false, at: t0 + .seconds(6))
        let flapping = h.connected(at: t0 + .seconds(7))
        #expect(flapping?.state == .unhealthy)
        #expect(flapping?.reason == "the MQTT broker at b:1883 dropped the connection 3 times in the last 60 s (last: malformed packet)")
        #expect(h.tick(at: t0 + .seconds(30)) == nil, "the drops still count")
        // A minute after the first drop it no longer counts: healthy again.
        #expect(h.tick(at: t0 + .seconds(62))?.state == .healthy)
    }

    @Test func aDisconnectThePluginAskedFor_isNotADrop() {
        var h = Health(endpoint: "b:1883", flapLimit: 1, window: .seconds(60))
        _ = h.connected(at: t0)
        #expect(h.lost("disconnected", expected: true, at: t0 + .seconds(1))?.state == .unhealthy)
        #expect(h.connected(at: t0 + .seconds(2))?.state == .healthy, "an expected disconnect does not count towards flapping")
        _ = h.lost("connection reset", expected: false, at: t0 + .seconds(3))
        #expect(h.connected(at: t0 + .seconds(4))?.state == .unhealthy, "one unexpected drop reaches a limit of one")
    }

    @Test(.timeLimit(.minutes(1))) func realBroker_stoppedAndStarted_healthFollows() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let (_, host, task) = try await BrokerIntegrationTests.startPlugin(broker)
        defer { task.cancel() }
        let endpoint = "127.0.0.1:\(broker.port)"
        try await within(20, "healthy") { await host.wait { $0.health == .healthy("connected to the MQTT broker at \(endpoint)") } }

        broker.stop()
        try await within(20, "unhealthy after the broker stopped") { await host.wait { $0.health?.state == .unhealthy } }
        let down = try #require(host.health?.reason)
        #expect(down.contains("MQTT broker at \(endpoint)"), "\(down)")

        try await broker.restart()
        try await within(20, "healthy again") { await host.wait { $0.health?.state == .healthy } }
        // Every change reached the host as a health report, in order.
        let seen = host.healthReports.map(\.state)
        #expect(seen.first == .unhealthy, "connecting comes first: \(seen)")
        #expect(seen.suffix(1) == [.healthy])
        #expect(seen.contains(.unhealthy) && seen.firstIndex(of: .healthy)! < seen.lastIndex(of: .unhealthy)!, "\(seen)")
    }
}
