import DriverAPI
import DriverTesting
import HomeModel
import Synchronization
import Testing

/// DriverTesting's in-memory host, driving a small plugin written here: a dimmable lamp that
/// takes a schema'd configuration, reports on a clock, and accepts commands and writes.
@Suite struct TestHostTests {
    final class Lamp: DriverPlugin {
        struct Configuration: Decodable, Sendable {
            var name: String
            var every: Int?
        }
        let manifest = PluginManifest(id: "lamp", name: "Lamp", version: "1")
        var configurationType: (any Decodable.Type)? { Configuration.self }
        let clock: ManualClock
        let on = Mutex(false)
        let startUp = Mutex<Int64?>(nil)

        init(clock: ManualClock) { self.clock = clock }

        func run(context: any DriverContext) async throws {
            let config = try context.configuration.decode(Configuration.self)
            context.publish(
                DeviceDescription(
                    localID: "l", name: config.name,
                    types: [
                        DeviceTypeDescription(
                            id: OnOffLightDeviceType.identifier, isPrimary: true,
                            traits: [OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: false]])
                    ]))
            while true {
                try await clock.sleep(for: .seconds(config.every ?? 10))
                context.report("l", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on.withLock { $0 }))
            }
        }

        func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
            guard command.command == OnOffTrait.Command.toggle else { throw HomeError.unsupportedOperation("toggle only") }
            let now = on.withLock { $0.toggle(); return $0 }
            context.report("l", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(now))
            return .bool(now)
        }

        func write(_ write: DriverWrite, context: any DriverContext) async throws {
            guard write.attribute == OnOffTrait.Attribute.startUpOnOff else { throw HomeError.unsupportedOperation("read-only") }
            startUp.withLock { $0 = write.value.intValue }
        }
    }

    @Test func refusesConfiguration_thatDoesNotMatchTheSchema_namingLineAndKey() {
        let host = TestHost(
            pluginID: "lamp",
            configuration: PluginConfiguration(value: ["name": 7], file: "hearth.yaml", keyPath: "plugins.lamp", lines: ["name": 4]))
        let lamp = Lamp(clock: host.clock)
        #expect(throws: HomeError.self) { try host.start(lamp) }
        do {
            try host.checkConfiguration(of: lamp)
        } catch let error as HomeError {
            #expect(error.message.hasPrefix("hearth.yaml:4: plugins.lamp.name: expected a string"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func publishesAndReports_asHappenings_whenTheClockMoves() async throws {
        let host = TestHost(pluginID: "lamp", configuration: ["name": "Desk", "every": 5])
        let happenings = host.happenings()
        let run = try host.start(Lamp(clock: host.clock))
        defer { run.cancel() }
        var iterator = happenings.makeAsyncIterator()
        guard case .published(let d) = await iterator.next() else { Issue.record("expected a publish first"); return }
        #expect(d.name == "Desk")
        await host.clock.waitForSleepers(1)
        host.clock.advance(by: .seconds(4))
        #expect(host.clock.sleeperCount == 1)  // not yet
        host.clock.advance(by: .seconds(1))
        guard case .reported(let r) = await iterator.next() else { Issue.record("expected a report"); return }
        #expect(r.value == false)
    }

    @Test func commandsAndWritesReachThePlugin() async throws {
        let host = TestHost(pluginID: "lamp", configuration: ["name": "Desk"])
        let lamp = Lamp(clock: host.clock)
        let run = try host.start(lamp)
        defer { run.cancel() }
        _ = await host.waitForDevice("l")
        #expect(try await host.command("l", trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle) == true)
        await host.waitForValue("l", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, equals: true)
        await #expect(throws: HomeError.unsupportedOperation("toggle only")) {
            try await host.command("l", trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        }
        try await host.write("l", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.startUpOnOff, value: 1)
        #expect(lamp.startUp.withLock { $0 } == 1)
    }

    /// DriverAPI v4's defaulted requirements: a plugin that does not implement them still
    /// builds and gets the defaults; the test host records what a plugin says about its health.
    @Test func healthReportsAreRecorded_andDoctorDefaultsToNoChecks() async throws {
        final class Bridge: DriverPlugin {
            let manifest = PluginManifest(id: "bridge", name: "Bridge", version: "1")
            func run(context: any DriverContext) async throws {
                context.reportHealth(.unhealthy("hub unreachable"))
                context.reportHealth(.healthy())
                context.setConnectivity(.offline, device: "hub", trait: OnOffTrait.identifier)
            }
            func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value { .null }
        }
        let host = TestHost(pluginID: "bridge")
        let happenings = host.happenings()
        try await host.start(Bridge()).value
        var iterator = happenings.makeAsyncIterator()
        #expect(await iterator.next() == .health(.unhealthy("hub unreachable")))
        #expect(await iterator.next() == .health(PluginHealth(.healthy)))
        #expect(host.health == PluginHealth(.healthy))
        #expect(host.healthReports.map(\.state) == [.unhealthy, .healthy])
        #expect(await iterator.next() == .traitConnectivity(.offline, device: "hub", trait: OnOffTrait.identifier, deviceType: nil))
        #expect(host.connectivity(of: "hub", trait: OnOffTrait.identifier) == .offline)
        #expect(host.connectivity(of: "hub") == nil, "one trait, not the whole device")
        #expect(await Bridge().doctor(DoctorRequest(configuration: nil, user: "hearth")).isEmpty)
    }
}
