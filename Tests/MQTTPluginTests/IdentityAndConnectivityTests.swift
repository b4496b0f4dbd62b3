import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import PluginHost
import TestSupport
import Testing
@testable import MQTTPlugin

/// Identity, Identify and per-trait connectivity with real parts: `libMQTTPlugin.so` loaded
/// with dlopen and run by the plugin host against the real core and a real mosquitto, fed the
/// vendors' own discovery messages (`Fixtures/`).
@Suite(.serialized) struct IdentityAndConnectivityTests {
    struct Running {
        let broker: MosquittoBroker
        let core: HomeCore
        let run: Task<Void, any Error>
        var home: Home { core.home(for: .system) }

        func stop() {
            run.cancel()
            broker.stop()
        }

        /// Invokes a command once the device's trait is known: a device just described reads
        /// online until the plugin sets its entities' availability (unknown until their
        /// availability topic answers), so a wait on "online" can end in that moment and the
        /// command be refused, rightly, as unknown. Retries that refusal alone, for at most 10 s.
        func invokeOnceKnown(_ request: CommandRequest) async throws -> Value {
            let deadline = ContinuousClock.now + .seconds(10)
            while true {
                do {
                    return try await home.invoke(request)
                } catch let e as HomeError where e.code == .deviceOffline && e.message.hasSuffix(" is unknown") && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }

        /// Waits until the core holds the device and `ready` holds for it.
        func device(_ local: String, _ what: String, _ ready: @escaping @Sendable (HomeDevice) -> Bool = { _ in true }) async throws -> HomeDevice {
            let id = DeviceID(plugin: "mqtt", local: local)
            let home = self.home
            let found = try await within(20, what) { () async -> HomeDevice? in
                // A device's own feed ends at once while it does not exist: wait for it in the
                // lists (discovered, or commissioned), then follow it.
                if (try? home.currentDevice(id: id)) == nil {
                    for await set in home.discoveredDevices().batched() where set.contains(where: { $0.id == id }) { break }
                }
                for await d in home.device(id: id) where ready(d) { return d }
                return nil
            }
            return try #require(found)
        }
    }

    static func start() async throws -> Running {
        let broker = try await MosquittoBroker()
        let loaded = try PluginLoader.load(HomeCoreIntegrationTests.library)
        let core = HomeCore()
        let configuration = PluginConfiguration(
            value: BrokerIntegrationTests.configuration(broker), file: "hearth.yaml", keyPath: "plugins.mqtt")
        let service = PluginService(loaded, core: core, configuration: configuration, clock: ContinuousClock(), logger: Logger(label: "test"))
        return Running(broker: broker, core: core, run: Task { try await service.run() })
    }

    static func basicInformation(_ d: HomeDevice) -> [AttributeID: Value] {
        d.snapshot.primaryType?.traits[BasicInformationTrait.identifier]?.attributes ?? [:]
    }

    typealias Info = BasicInformationTrait.Attribute

    @Test(arguments: [
        // fixture, device, vendor, product, firmware, unique ID
        ("zigbee2mqtt-aqara-weather", "zigbee2mqtt_0x00158d0001a2b3c4", "Aqara", "Temperature and humidity sensor (WSDCGQ11LM)", "3000-0001",
         "zigbee2mqtt_0x00158d0001a2b3c4"),
        ("tasmota-s31", "1C8A7B", "Tasmota", "Sonoff S31", "12.5.0(tasmota)", "1C8A7B"),
        ("esphome-livingroom", "240ac4123456", "espressif", "esp32dev", "esphome v2024.2.0 Feb 20 2024, 10:00:00", "240ac4123456"),
        ("shelly-plug-s", "c45bbe6a1b2c", "Allterco Robotics", "Shelly Plug S", "20230913-114008/v1.14.0-gcb84623", "c45bbe6a1b2c"),
    ])
    func discoveryDeviceBlock_fillsBasicInformation(
        _ fixture: String, _ local: String, _ vendor: String, _ product: String, _ firmware: String, _ unique: String
    ) async throws {
        let running = try await Self.start()
        defer { running.stop() }
        for item in try Fixture(fixture).discovery { try await running.broker.mosquittoPub(item.topic, item.payload, retain: true) }
        let device = try await running.device(local, "\(fixture)'s device") { !Self.basicInformation($0).isEmpty }
        let info = Self.basicInformation(device)
        #expect(info[Info.vendorName] == .string(vendor))
        #expect(info[Info.productName] == .string(String(product.prefix(32))))
        #expect(info[Info.softwareVersionString] == .string(firmware))
        #expect(info[Info.uniqueID] == .string(unique))
        // The seed's typed read.
        let primary = try #require(device.snapshot.primaryType)
        let typed = BasicInformationTrait(state: try #require(primary.traits[BasicInformationTrait.identifier]), binding: TraitBinding(device: device.id, deviceType: primary.id, backend: nil))
        #expect(typed.attributes.vendorName == vendor)
        // No identify button in these firmwares' messages: Identify is not advertised.
        #expect(device.snapshot.types.allSatisfy { $0.traits[IdentifyTrait.identifier] == nil })
    }

    /// zigbee2mqtt's identify button (device_class identify, `<name>/set/identify`) and an
    /// ESPHome node's `suggested_area` (`sa`).
    @Test func identifyButton_advertisesIdentify_andSuggestedAreaReachesCommissioning() async throws {
        let running = try await Self.start()
        defer { running.stop() }
        let bulb = try Fixture("zigbee2mqtt-ikea-bulb")
        for item in bulb.discovery { try await running.broker.mosquittoPub(item.topic, item.payload, retain: true) }
        try await running.broker.mosquittoPub(
            "homeassistant/button/0x000d6ffffe123456/identify/config",
            #"{"availability":[{"topic":"zigbee2mqtt/bridge/state","value_template":"{{ value_json.state }}"}],"#
                + #""command_topic":"zigbee2mqtt/desk_bulb/set/identify","device":{"identifiers":["zigbee2mqtt_0x000d6ffffe123456"],"#
                + #""manufacturer":"IKEA","model":"TRADFRI bulb E27 WS opal 980lm (LED1545G12)","name":"desk_bulb","sw_version":"3000-0001"},"#
                + #""device_class":"identify","entity_category":"config","object_id":"desk_bulb_identify","payload_press":"identify","#
                + #""unique_id":"0x000d6ffffe123456_identify_zigbee2mqtt"}"#, retain: true)
        try await running.broker.mosquittoPub("zigbee2mqtt/bridge/state", #"{"state":"online"}"#, retain: true)
        try await running.broker.mosquittoPub(
            "homeassistant/sensor/kitchen-node/kitchen_temperature/config",
            #"{"dev_cla":"temperature","unit_of_meas":"°C","stat_t":"kitchen-node/sensor/kitchen_temperature/state","#
                + #""avty_t":"kitchen-node/status","uniq_id":"ESPsensorkitchen_temperature","#
                + #""dev":{"ids":"a4cf12f0e1d2","name":"kitchen-node","sw":"esphome v2024.2.0","mdl":"esp32dev","mf":"espressif","sa":"Kitchen"}}"#,
            retain: true)

        let lamp = try await running.device("zigbee2mqtt_0x000d6ffffe123456", "the bulb with Identify") {
            $0.snapshot.primaryType?.traits[IdentifyTrait.identifier] != nil
                && $0.snapshot.primaryType?.traits[IdentifyTrait.identifier]?.sourceConnectivity.connectivityState == .online
        }
        let node = try await running.device("a4cf12f0e1d2", "the ESPHome node")
        #expect(node.snapshot.suggestedRoom == "Kitchen")
        #expect(lamp.snapshot.suggestedRoom == nil)

        let device = try DeviceClient(port: running.broker.port)
        try await device.start()
        defer { device.stop() }
        try await device.subscribe("zigbee2mqtt/desk_bulb/set/identify")
        let primary = try #require(lamp.snapshot.primaryType?.id)
        _ = try await running.invokeOnceKnown(
            CommandRequest(device: lamp.id, deviceType: primary, trait: IdentifyTrait.identifier, command: IdentifyTrait.Command.identify,
                           arguments: ["IdentifyTime": .int(5)]))
        let pressed = try await within { await device.next(on: "zigbee2mqtt/desk_bulb/set/identify") }
        #expect(pressed == "identify")

        // Commissioning clears the suggestion (it is for the discovered list only).
        let home = running.home
        let structure = try home.createStructure(named: "Home")
        let kitchen = try home.createRoom(named: "Kitchen", in: structure)
        try home.commission(node.id, name: "Kitchen thermometer", structure: structure, room: kitchen)
        #expect(try home.currentDevice(id: node.id).snapshot.suggestedRoom == nil)
    }

    /// A home-made ESP32 whose two entities have their own availability topics (its battery
    /// monitor is a separate board): when the light's entity dies its On/Off goes offline, the
    /// device type partially online, and a command to it fails fast.
    @Test func oneDeadEntity_makesItsTraitOffline_theDeviceTypePartiallyOnline_andCommandsFailFast() async throws {
        let running = try await Self.start()
        defer { running.stop() }
        let dev = #""dev":{"ids":"esp32-porch","name":"Porch light","mf":"Home-made","mdl":"ESP32 relay","sw":"1.2.0","hw":"3"}"#
        try await running.broker.mosquittoPub(
            "homeassistant/light/esp32-porch/light/config",
            #"{"cmd_t":"porch/light/set","stat_t":"porch/light/state","avty_t":"porch/light/status","uniq_id":"porch-light","#
                + dev + "}", retain: true)
        try await running.broker.mosquittoPub(
            "homeassistant/sensor/esp32-porch/battery/config",
            #"{"dev_cla":"battery","unit_of_meas":"%","stat_t":"porch/battery/state","avty_t":"porch/battery/status","uniq_id":"porch-battery","#
                + dev + "}", retain: true)
        try await running.broker.mosquittoPub("porch/light/status", "online", retain: true)
        try await running.broker.mosquittoPub("porch/battery/status", "online", retain: true)
        try await running.broker.mosquittoPub("porch/light/state", "OFF", retain: true)
        let online = try await running.device("esp32-porch", "the porch light online") {
            $0.sourceConnectivity.connectivityState == .online && $0.snapshot.primaryType?.traits[PowerSourceTrait.identifier] != nil
        }
        let type = try #require(online.snapshot.primaryType?.id)
        #expect(Self.basicInformation(online)[Info.hardwareVersion] == .int(3))

        // The light still obeys while its entity is alive.
        let device = try DeviceClient(port: running.broker.port)
        try await device.start()
        defer { device.stop() }
        try await device.subscribe("porch/light/set")
        _ = try await running.invokeOnceKnown(
            CommandRequest(device: online.id, deviceType: type, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
        #expect(try await within { await device.next(on: "porch/light/set") } == "ON")

        try await running.broker.mosquittoPub("porch/light/status", "offline", retain: true)
        let partial = try await running.device("esp32-porch", "the light's entity offline") {
            $0.snapshot.primaryType?.traits[OnOffTrait.identifier]?.sourceConnectivity.connectivityState == .offline
        }
        let primary = try #require(partial.snapshot.primaryType)
        #expect(primary.traits[PowerSourceTrait.identifier]?.sourceConnectivity.connectivityState == .online)
        #expect(primary.sourceConnectivity.connectivityState == .partiallyOnline)
        #expect(partial.sourceConnectivity.connectivityState == .partiallyOnline)

        // A command to the dead trait fails fast, before any driver is asked.
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: HomeError.deviceOffline("Porch light (mqtt:esp32-porch) cannot be reached: its On/Off is offline")) {
            _ = try await running.home.invoke(
                CommandRequest(device: online.id, deviceType: type, trait: OnOffTrait.identifier, command: OnOffTrait.Command.off))
        }
        #expect(started.duration(to: clock.now) < .seconds(1))

        try await running.broker.mosquittoPub("porch/light/status", "online", retain: true)
        let back = try await running.device("esp32-porch", "the light back") { $0.sourceConnectivity.connectivityState == .online }
        #expect(back.snapshot.primaryType?.traits[OnOffTrait.identifier]?.sourceConnectivity.connectivityState == .online)
    }
}
