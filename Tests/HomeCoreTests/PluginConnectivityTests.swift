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

    func state(_ core: HomeCore, _ id: DeviceID) -> ConnectivityState? {
        try? core.home(for: .system).currentDevice(id: id).snapshot.sourceConnectivity.connectivityState
    }

    func onOffState(_ core: HomeCore, _ id: DeviceID) -> ConnectivityState? {
        try? core.home(for: .system).currentDevice(id: id).snapshot.types.first?.traits[OnOffTrait.identifier]?.sourceConnectivity
            .connectivityState
    }

    @Test func devicesGoOffline_whenPluginIsDown_reportedTraitOnlineWithNextReport_allWithNextPublish() throws {
        let core = HomeCore()
        let context = core.context(for: "p")
        context.publish(lamp())
        let id = DeviceID(plugin: "p", local: "lamp")
        #expect(state(core, id) == .online)

        context.setConnectivity(.offline, device: nil)
        #expect(state(core, id) == .offline)

        context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, false)
        #expect(onOffState(core, id) == .online)
        #expect(state(core, id) == .partiallyOnline)

        context.publish(lamp())
        #expect(state(core, id) == .online)
    }

    @Test func otherPluginsDevices_stayOnline_whenOnePluginGoesOffline() throws {
        let core = HomeCore()
        core.context(for: "a").publish(lamp())
        core.context(for: "b").publish(lamp())
        core.context(for: "a").setConnectivity(.offline, device: nil)
        #expect(state(core, DeviceID(plugin: "a", local: "lamp")) == .offline)
        #expect(state(core, DeviceID(plugin: "b", local: "lamp")) == .online)
    }
}
