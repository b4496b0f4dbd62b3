import DriverAPI
import DriverTesting
import Foundation
import HomeCore
import HomeModel
import PluginHost
import Testing

@Suite struct PluginRestartTests {
    let lamp = DeviceID(plugin: "flaky", local: "lamp")

    func flaky(failures: Int, core: HomeCore, clock: ManualClock, policy: RestartPolicy) throws -> PluginService<ManualClock> {
        let loaded = try PluginLoader.load(fixture("FlakyPlugin"))
        return PluginService(
            loaded, core: core, configuration: section("flaky", ["failures": .int(Int64(failures))]), policy: policy, clock: clock,
            logger: testLogger)
    }

    @Test func restartsWithExponentialBackoffAndCap_devicesOfflineMeanwhile_onlineAgain() async throws {
        let core = HomeCore()
        let clock = ManualClock()
        let policy = RestartPolicy(initial: .seconds(1), maximum: .seconds(4), parkAfter: 10)
        let service = try flaky(failures: 4, core: core, clock: clock, policy: policy)
        try await withServices([service]) {
            // Failure n waits initial·2^(n-1), capped: 1 s, 2 s, 4 s, 4 s.
            for (n, delay) in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 4.0)] {
                let s = await service.waitForStatus { $0.state == .restarting && $0.restarts == n }
                #expect(s?.restartDelaySeconds == delay)
                #expect(s?.lastError == "planned failure \(n) of 4")
                await waitForDevice(core, lamp) { connectivity($0) == .offline }
                await clock.waitForSleepers(1)
                // Not a moment before the delay…
                clock.advance(by: .milliseconds(Int64(delay * 1000) - 1))
                #expect(clock.sleeperCount == 1)
                #expect(service.currentStatus.state == .restarting)
                // …and at the delay it runs again.
                clock.advance(by: .milliseconds(1))
            }
            await service.waitForStatus { $0.state == .running && $0.restarts == 4 }
            let back = await waitForDevice(core, lamp) { connectivity($0) == .online }
            #expect(back != nil)
            // It serves commands again.
            _ = try await core.home(for: .system).invoke(lampCommand("flaky", OnOffTrait.Command.on))
            await waitForDevice(core, lamp) { $0.types.first?.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff] == true }
        }
        #expect(service.currentStatus.state == .stopped)
    }

    @Test func parksPluginThatKeepsFailing_visibleAsFailed_othersKeepRunning() async throws {
        let core = HomeCore()
        let clock = ManualClock()
        let policy = RestartPolicy(initial: .seconds(1), maximum: .seconds(60), parkAfter: 3)
        let failing = try flaky(failures: 1000, core: core, clock: clock, policy: policy)
        let healthyLoaded = try PluginLoader.load(fixture("CrashingPlugin"))
        let healthy = PluginService(
            healthyLoaded, core: core, configuration: section("crashy", ["mode": "segfault"]), policy: policy, clock: clock,
            logger: testLogger)
        let registry = PluginRegistry()
        registry.add(failing)
        registry.add(healthy)
        try await withServices([healthy, failing]) {
            for n in 1...2 {
                await failing.waitForStatus { $0.state == .restarting && $0.restarts == n }
                await clock.waitForSleepers(1)
                clock.advance(by: .seconds(60))
            }
            let parked = await failing.waitForStatus { $0.state == .parked }
            #expect(parked?.lastError == "planned failure 3 of 1000")
            #expect(parked?.isFailed == true)
            #expect(registry.status(of: "flaky")?.state == .parked)
            await waitForDevice(core, lamp) { connectivity($0) == .offline }
            // Nothing is scheduled any more, and the other plugin still serves.
            #expect(clock.sleeperCount == 0)
            await healthy.waitForStatus { $0.state == .running }
            #expect(registry.status(of: "crashy")?.state == .running)
            _ = try await core.home(for: .system).invoke(lampCommand("crashy", OnOffTrait.Command.on))
            // A command to the parked plugin's offline lamp is refused, not lost.
            await #expect(throws: HomeError.self) {
                try await core.home(for: .system).invoke(lampCommand("flaky", OnOffTrait.Command.on))
            }
        }
        #expect(failing.currentStatus.state == .parked)
    }
}
