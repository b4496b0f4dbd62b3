import DriverAPI
import DriverTesting
import HomeModel
import MyPlugin
import Testing

/// The plugin against DriverTesting's in-memory host: no daemon, no hardware, no sleeping.
@Suite struct MyPluginTests {
    let config: Value = ["heartbeat": 30, "lamps": [["id": "desk", "name": "Desk Lamp", "room": "Study"]]]

    @Test func publishesItsLamps_withTheConfiguredRoom() async throws {
        let host = TestHost(pluginID: "my-plugin", configuration: config)
        let run = try host.start(MyPlugin(clock: host.clock))
        defer { run.cancel() }
        let desk = await host.waitForDevice("desk")
        #expect(desk.name == "Desk Lamp")
        #expect(desk.commission?.room == "Study")
        #expect(host.value("desk", OnOffTrait.identifier, OnOffTrait.Attribute.onOff) == false)
    }

    @Test func toggleReportsTheNewState() async throws {
        let host = TestHost(pluginID: "my-plugin", configuration: config)
        let run = try host.start(MyPlugin(clock: host.clock))
        defer { run.cancel() }
        _ = await host.waitForDevice("desk")
        try await host.command("desk", trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle)
        await host.waitForValue("desk", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, equals: true)
    }

    @Test func reportsEveryHeartbeat() async throws {
        let host = TestHost(pluginID: "my-plugin", configuration: config)
        let happenings = host.happenings()
        let run = try host.start(MyPlugin(clock: host.clock))
        defer { run.cancel() }
        await host.clock.waitForSleepers(1)
        host.clock.advance(by: .seconds(30))
        for await h in happenings {
            if case .reported(let r) = h, r.localID == "desk" { break }
        }
    }

    @Test func heartbeatTrait_isDeclared_countsAndResets() async throws {
        let host = TestHost(pluginID: "my-plugin", configuration: config)
        let run = try host.start(MyPlugin(clock: host.clock))
        defer { run.cancel() }
        _ = await host.waitForDevice("desk")
        let trait = try #require(host.catalog.trait(MyPlugin<ManualClock>.heartbeatTrait))
        #expect(trait.qualifiedName == "MyCompany.HeartbeatTrait")
        await host.clock.waitForSleepers(1)
        host.clock.advance(by: .seconds(30))
        await host.waitForValue("desk", MyPlugin<ManualClock>.heartbeatTrait, MyPlugin<ManualClock>.beats, equals: 1)
        try await host.command("desk", trait: MyPlugin<ManualClock>.heartbeatTrait, command: MyPlugin<ManualClock>.reset)
        await host.waitForValue("desk", MyPlugin<ManualClock>.heartbeatTrait, MyPlugin<ManualClock>.beats, equals: 0)
        #expect(host.refusals.isEmpty, "every value fits the declaration")
    }

    @Test func refusesABadHeartbeat_byKeyPath() {
        let host = TestHost(pluginID: "my-plugin", configuration: ["heartbeat": 0, "lamps": []])
        #expect(throws: HomeError.invalidArgument("test.yaml: plugins.my-plugin.heartbeat: must be between 1 and 86400 seconds")) {
            try host.checkConfiguration(of: MyPlugin(clock: host.clock))
        }
    }

    @Test func refusesLampsWithoutAName() {
        let host = TestHost(pluginID: "my-plugin", configuration: ["lamps": [["id": "desk"]]])
        #expect(throws: HomeError.invalidArgument("test.yaml: plugins.my-plugin.lamps[0]: missing required key 'name'")) {
            try host.checkConfiguration(of: MyPlugin(clock: host.clock))
        }
    }
}
