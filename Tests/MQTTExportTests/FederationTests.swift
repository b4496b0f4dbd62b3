import DriverAPI
import Foundation
import HashTreeCollections
import HomeCore
import HomeModel
import Logging
@testable import MQTTExport
import PluginHost
import TestSupport
import Testing

/// Two Hearths through one real mosquitto, in one process: A exports (the exporter), B imports
/// (the real `libMQTTPlugin.so`, loaded with dlopen by the plugin host). The two-daemon run is
/// `scripts/test-federation`.
@Suite(.serialized) struct FederationTests {
    static let library = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/debug/libMQTTPlugin.so").path

    static func importer(_ core: HomeCore, port: Int, clientID: String, ignore: [String]) throws -> Task<Void, any Error> {
        let loaded = try PluginLoader.load(library)
        let value: Value = [
            "broker": ["host": "127.0.0.1", "port": .int(Int64(port)), "clientID": .string(clientID), "reconnect": ["minimumDelay": 1, "maximumDelay": 1]],
            "discovery": ["ignoreNodes": .list(ignore.map { .string($0) })],
        ]
        let service = PluginService(
            loaded, core: core, configuration: PluginConfiguration(value: value, file: "hearth.yaml", keyPath: "plugins.mqtt"),
            clock: ContinuousClock(), logger: Logger(label: "test.import"))
        return Task { try await service.run() }
    }

    static func discovered(_ core: HomeCore, named name: String) async -> DeviceSnapshot? {
        for await set in core.home(for: .system).discoveredDevices().batched() {
            if let d = set.first(where: { $0.name == name }) { return d.snapshot }
        }
        return nil
    }

    @Test func hearthBSeesControlsAndLosesHearthAsDevices() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        // Hearth A: GPIO-like devices, exporting as hearth_a, and importing too (it must skip itself).
        let (coreA, driverA) = ExportFixtures.core()
        coreA.setCommandHandler(FakeOutputs(context: driverA), for: "gpio")
        let exporter = MQTTExporter(core: coreA, settings: try ExposureSettings(store: nil), configuration: .init(port: broker.port, nodeID: "hearth_a"))
        let runA = Task { try await exporter.run() }
        let importA = try Self.importer(coreA, port: broker.port, clientID: "hearth-a-import", ignore: ["hearth_a"])
        defer { importA.cancel() }
        // Hearth B: imports.
        let coreB = HomeCore()
        let importB = try Self.importer(coreB, port: broker.port, clientID: "hearth-b-import", ignore: ["hearth_b"])
        defer { importB.cancel() }

        let relay = try #require(try await within(30, "A's relay discovered on B") { await Self.discovered(coreB, named: "Relay") })
        #expect(relay.pluginID == "mqtt")
        #expect(relay.manufacturer == "Acme" && relay.model == "R1")
        #expect(relay.types.map(\.id).contains(OnOffPlugInUnitDeviceType.identifier))
        // Readings are attribute changes (they wake no device-list subscription): poll B's state.
        let thermo = try await within(30, "A's thermometer on B with both readings") { () async throws -> DeviceSnapshot in
            while true {
                if let d = coreB.state.devices.values.first(where: { $0.name == "Thermometer" }),
                    d.type(TemperatureSensorDeviceType.identifier)?.traits[TemperatureMeasurementTrait.identifier]?[TemperatureMeasurementTrait.Attribute.measuredValue] == .int(2150),
                    d.type(HumiditySensorDeviceType.identifier)?.traits[RelativeHumidityMeasurementTrait.identifier]?[RelativeHumidityMeasurementTrait.Attribute.measuredValue] != nil
                {
                    return d
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(thermo.type(HumiditySensorDeviceType.identifier)?.traits[RelativeHumidityMeasurementTrait.identifier]?[RelativeHumidityMeasurementTrait.Attribute.measuredValue] == .int(4350))
        let lamp = try #require(try await within(30, "A's lamp on B") { await Self.discovered(coreB, named: "Lamp") })
        #expect(lamp.types.contains { $0.id == DimmableLightDeviceType.identifier })
        let button = try #require(try await within(30, "A's button on B") { await Self.discovered(coreB, named: "Button") })
        #expect(button.types.contains { $0.id == GenericSwitchDeviceType.identifier })
        #expect(await Self.discoveredNames(coreB).contains("Front Lock") == false, "the lock stays home")

        // B commissions and switches A's relay; the state comes back through A's hardware.
        let homeB = coreB.home(for: .system)
        let structure = try homeB.createStructure(named: "House")
        try homeB.commission(relay.id, name: "Garage relay", structure: structure)
        try await Self.online(coreB, relay.id)
        _ = try await homeB.invoke(CommandRequest(device: relay.id, deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        try await within(20, "A's relay on") {
            while coreA.state.devices["gpio:relay"]?.types[0].traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] != .bool(true) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        try await within(20, "B sees the relay on") {
            while coreB.state.devices[relay.id]?.type(OnOffPlugInUnitDeviceType.identifier)?.traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] != .bool(true) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        // A's colour bulb arrives as an Extended Color Light with its mireds range; B sets its
        // colour temperature and brightness, and A's hardware gets Color Control commands.
        let bulb = try #require(try await within(30, "A's bulb on B") { await Self.discovered(coreB, named: "Bulb") })
        let bulbColor = bulb.type(ExtendedColorLightDeviceType.identifier)?.traits[ColorControlTrait.identifier]
        #expect(bulbColor?[ColorControlTrait.Attribute.colorTempPhysicalMinMireds] == .int(153))
        #expect(bulbColor?[ColorControlTrait.Attribute.colorTempPhysicalMaxMireds] == .int(454))
        try homeB.commission(bulb.id, name: "Bulb", structure: structure)
        try await Self.online(coreB, bulb.id)
        _ = try await homeB.invoke(CommandRequest(
            device: bulb.id, deviceType: ExtendedColorLightDeviceType.identifier, trait: ColorControlTrait.identifier,
            command: ColorControlTrait.Command.moveToColorTemperature,
            arguments: ["ColorTemperatureMireds": 400, "TransitionTime": 0, "OptionsMask": 0, "OptionsOverride": 0]))
        try await within(20, "A's bulb at 400 mireds, and B sees it") {
            while coreA.state.devices["gpio:bulb"]?.types[0].traits[ColorControlTrait.identifier]?[ColorControlTrait.Attribute.colorTemperatureMireds] != .int(400)
                || coreB.state.devices[bulb.id]?.type(ExtendedColorLightDeviceType.identifier)?.traits[ColorControlTrait.identifier]?[
                    ColorControlTrait.Attribute.colorTemperatureMireds] != .int(400)
            {
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        // A never imported itself.
        #expect(coreA.state.devices.keys.allSatisfy { $0.pluginID == "gpio" })

        // A stops: B marks A's devices offline.
        runA.cancel()
        _ = try? await runA.value
        try await within(20, "B marks the relay offline") {
            while coreB.state.devices[relay.id]?.sourceConnectivity.connectivityState != .offline { try await Task.sleep(for: .milliseconds(20)) }
        }
    }

    /// A house with several Pis: each Hearth on its own broker, the brokers joined by
    /// mosquitto's own bridge (`connection` in mosquitto.conf).
    @Test func throughTwoBrokersJoinedByMosquittosBridge() async throws {
        let garageBroker = try await MosquittoBroker()
        defer { garageBroker.stop() }
        let houseBroker = try await MosquittoBroker(extraConfig: """

            connection garage
            address 127.0.0.1:\(garageBroker.port)
            topic homeassistant/# both 1
            topic hearth/# both 1
            cleansession true
            restart_timeout 1

            """)
        defer { houseBroker.stop() }
        let (coreA, driverA) = ExportFixtures.core()
        coreA.setCommandHandler(FakeOutputs(context: driverA), for: "gpio")
        let exporter = MQTTExporter(core: coreA, settings: try ExposureSettings(store: nil), configuration: .init(port: garageBroker.port, nodeID: "hearth_a"))
        let runA = Task { try await exporter.run() }
        let coreB = HomeCore()
        let importB = try Self.importer(coreB, port: houseBroker.port, clientID: "hearth-b-import", ignore: ["hearth_b"])
        defer { importB.cancel() }

        let relay = try #require(try await within(30, "A's relay on B through the bridge") { await Self.discovered(coreB, named: "Relay") })
        let homeB = coreB.home(for: .system)
        try homeB.commission(relay.id, name: "Garage relay", structure: try homeB.createStructure(named: "House"))
        try await Self.online(coreB, relay.id)
        _ = try await homeB.invoke(CommandRequest(device: relay.id, deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        try await within(20, "B sees A's relay on") {
            while coreB.state.devices[relay.id]?.type(OnOffPlugInUnitDeviceType.identifier)?.traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] != .bool(true) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(coreA.state.devices["gpio:relay"]?.types[0].traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == .bool(true))
        runA.cancel()
        _ = try? await runA.value
        try await within(20, "B marks the relay offline") {
            while coreB.state.devices[relay.id]?.sourceConnectivity.connectivityState != .offline { try await Task.sleep(for: .milliseconds(20)) }
        }
    }

    /// Waits until the imported device is online: its availability arrives after its discovery
    /// config, and a command to a trait still `unknown` fails fast with `deviceOffline`.
    static func online(_ core: HomeCore, _ id: DeviceID) async throws {
        try await within(20, "\(id) online") {
            while core.state.devices[id]?.sourceConnectivity.connectivityState != .online { try await Task.sleep(for: .milliseconds(20)) }
        }
    }

    static func discoveredNames(_ core: HomeCore) async -> [String] {
        core.state.devices.values.filter { $0.commissioning == .discovered }.map(\.name)
    }
}
