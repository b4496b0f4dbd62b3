import HearthConfiguration
import HomeCore
import HomeModel
import Testing

/// `exposure:` in hearth.yaml.
@Suite struct ExposureConfigTests {
    @Test func offByDefault() throws {
        let config = try HearthConfig.parse("log: {level: info}\n", file: "hearth.yaml")
        #expect(config.exposure.mqtt == nil)
        #expect(config.exposure.devices == HearthConfig.Exposure.Selection())
    }

    @Test func readsTheSelectionAndTheMQTTDoor() throws {
        let yaml = """
            exposure:
              devices:
                rooms: [Garage]
                deviceTypes: [OnOffLight, "0x0302"]
                ids: ["gpio:lock"]
                exclude: { rooms: [Attic], ids: ["gpio:secret"] }
                includeSensitive: false
                allowControl: false
              mqtt:
                broker: 127.0.0.1:1884
                nodeID: hearth_garage
                reexportImported: true
            """
        let e = try HearthConfig.parse(yaml, file: "hearth.yaml").exposure
        #expect(e.devices.rooms == ["Garage"])
        #expect(e.devices.deviceTypes == ["OnOffLight", "0x0302"])
        #expect(e.devices.ids == ["gpio:lock"])
        #expect(e.devices.excludedRooms == ["Attic"])
        #expect(e.devices.excludedIDs == ["gpio:secret"])
        #expect(e.devices.allowControl == false)
        let m = try #require(e.mqtt)
        #expect(m.port == 1884 && m.host == "127.0.0.1")
        #expect(m.prefix == "homeassistant")
        #expect(m.nodeID == "hearth_garage")
        #expect(m.baseTopic == "hearth/hearth_garage")
        #expect(m.reexportImported)
        #expect(m.importPlugins == ["mqtt"])
    }

    @Test(arguments: [
        ("exposure:\n  mqtt: {broker: nowhere}\n", "exposure.mqtt.broker"),
        ("exposure:\n  mqtt: {prefix: \"home/#\"}\n", "exposure.mqtt.prefix"),
        ("exposure:\n  mqtt: {nodeID: \"a/b\"}\n", "exposure.mqtt.nodeID"),
        ("exposure:\n  devices: {rooms: Garage}\n", "exposure.devices.rooms"),
        ("exposure:\n  devices: {colour: red}\n", "exposure.devices.colour"),
        ("exposure:\n  bridges: {}\n", "exposure.bridges"),
    ])
    func mistakesNameTheKeyAndLine(yaml: String, key: String) {
        do {
            _ = try HearthConfig.parse(yaml, file: "hearth.yaml")
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.message.contains(key), "\(error.message)")
            #expect(error.message.hasPrefix("hearth.yaml:"), "\(error.message)")
        }
    }

    @Test func mqttCanBeSwitchedOff() throws {
        let e = try HearthConfig.parse("exposure:\n  mqtt: {enabled: false, broker: 127.0.0.1:1883}\n", file: "h.yaml").exposure
        #expect(e.mqtt == nil)
    }

    /// Names resolve against the layout: rooms by name or ID, types by name or hex.
    @Test func namesResolveAgainstTheLayout() throws {
        let core = HomeCore()
        let home = core.home(for: .system)
        let s = try home.createStructure(named: "Home")
        let garage = try home.createRoom(named: "Garage", in: s)
        let (policy, unknown) = ExposurePolicy.resolving(
            rooms: ["garage", "Nowhere"], deviceTypes: ["OnOffLight", "0x0302", "Toaster"], devices: ["gpio:lock"],
            state: core.state, catalog: core.catalog)
        #expect(policy.rooms == [garage])
        #expect(policy.deviceTypes == [OnOffLightDeviceType.identifier, TemperatureSensorDeviceType.identifier])
        #expect(policy.devices == ["gpio:lock"])
        #expect(unknown == ["room 'Nowhere'", "device type 'Toaster'"])
    }
}
