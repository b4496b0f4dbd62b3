import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import PluginHost
import TestSupport
import Testing
@testable import MQTTPlugin

/// The whole path with real parts: `libMQTTPlugin.so` loaded with dlopen, run by the plugin host
/// against the real observer core, a real mosquitto, and a libmosquitto client as the device.
@Suite(.serialized) struct HomeCoreIntegrationTests {
    static let library = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/debug/libMQTTPlugin.so").path

    @Test func discoveredDevice_waitsUncommissioned_thenIsCommissionedAndControlledThroughTheCore() async throws {
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let device = try await DeviceClient.retainedPlug(port: broker.port)
        defer { device.stop() }

        let loaded = try PluginLoader.load(Self.library)
        #expect(loaded.manifest.id == "mqtt")
        let core = HomeCore()
        let configuration = PluginConfiguration(
            value: BrokerIntegrationTests.configuration(broker), file: "hearth.yaml", keyPath: "plugins.mqtt")
        let service = PluginService(loaded, core: core, configuration: configuration, clock: ContinuousClock(), logger: Logger(label: "test"))
        let run = Task { try await service.run() }
        defer { run.cancel() }

        let home = core.home(for: .system)
        let id = DeviceID(plugin: "mqtt", local: "plug-1")
        // Device lists change with membership and shape; attribute values come per device.
        let listed = try await within(20, "the plug in the discovered list") { () async -> HomeDevice? in
            for await set in home.discoveredDevices().batched() {
                if let d = set.first(where: { $0.id == id }) { return d }
            }
            return nil
        }
        #expect(listed != nil)
        let discovered = try await within(20, "the plug's state") { () async -> HomeDevice? in
            for await d in home.device(id: id) where d.types.current(OnOffPlugInUnitDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff == false {
                return d
            }
            return nil
        }
        #expect(discovered?.name == "Plug")
        #expect(try await home.devices().list().isEmpty, "discovered devices are not commissioned by themselves")

        let structure = try home.createStructure(named: "Home")
        let room = try home.createRoom(named: "Office", in: structure)
        try home.commission(id, name: "Desk plug", structure: structure, room: room)
        #expect(try await home.devices().list().map(\.id) == [id])

        _ = try await home.invoke(
            CommandRequest(device: id, deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        let received = try await within { await device.next(on: "acme/plug/set") }
        #expect(received == "ON")
        let before = try home.currentDevice(id: id).types.current(OnOffPlugInUnitDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff
        #expect(before == false, "the core changes only when the device reports")
        try device.publish("acme/plug/state", "ON", retain: true)
        let after = try await within(20, "the reported state in the core") { () async -> HomeDevice? in
            for await d in home.device(id: id) {
                if d.types.current(OnOffPlugInUnitDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff == true { return d }
            }
            return nil
        }
        #expect(after?.sourceConnectivity.connectivityState == .online)

        try device.publish("acme/plug/availability", "offline", retain: true)
        let offline = try await within(20, "the device offline in the core") { () async -> HomeDevice? in
            for await d in home.device(id: id) where d.sourceConnectivity.connectivityState == .offline { return d }
            return nil
        }
        #expect(offline != nil)
        await #expect(throws: HomeError.self) {
            try await home.invoke(
                CommandRequest(device: id, deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.bogus))
        }
    }
}

extension OnOffTrait.Command {
    /// A command ID the On/Off trait does not have.
    static let bogus: CommandID = 0x7F
}
