import DriverAPI
import HomeCore
import HomeModel
import Testing

/// What the plugin host relies on: a plugin's devices go offline when the host says so (its
/// plugin is down) and come back online with the plugin's next report.
@Suite struct PluginConnectivityTests {
    func lamp() -> DeviceDescription {
        DeviceDescription(
            localID: "lamp", name: "Lamp",
            types: [
                DeviceTypeDescription(
                    id: OnOffLightDeviceType.identifier, isPrimary: true,
                    traits: [
                        IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                        OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: false],
                    ])
            ])
    }

    @Test func devicesGoOffline_whenPluginIsDown_andOnlineAgain_withNextReport() throws {
        let core = HomeCore()
        let context = core.context(for: "p")
        context.publish(lamp())
        let id = DeviceID(plugin: "p", local: "lamp")
        #expect(core.state.devices[id]?.sourceConnectivity.connectivityState == .online)

        context.setConnectivity(.offline, device: nil)
        #expect(core.state.devices[id]?.sourceConnectivity.connectivityState == .offline)

        context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, false)
        #expect(core.state.devices[id]?.sourceConnectivity.connectivityState == .online)
    }

    @Test func otherPluginsDevices_stayOnline_whenOnePluginGoesOffline() throws {
        let core = HomeCore()
        core.context(for: "a").publish(lamp())
        core.context(for: "b").publish(lamp())
        core.context(for: "a").setConnectivity(.offline, device: nil)
        #expect(core.state.devices[DeviceID(plugin: "a", local: "lamp")]?.sourceConnectivity.connectivityState == .offline)
        #expect(core.state.devices[DeviceID(plugin: "b", local: "lamp")]?.sourceConnectivity.connectivityState == .online)
    }
}
