import DriverAPI
import HomeCore
import HomeModel
@testable import PluginHost
import Testing

/// The host's part of availability: devices offline while their plugin is down, the whole
/// device online again with its next report.
@Suite struct SupervisedContextTests {
    let id = DeviceID(plugin: "p", local: "lamp")

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

    func state(_ core: HomeCore) -> ConnectivityState? {
        try? core.home(for: .system).currentDevice(id: id).snapshot.sourceConnectivity.connectivityState
    }

    @Test func wholeDeviceComesBackOnline_withItsFirstReportAfterThePluginWasDown() {
        let core = HomeCore()
        let context = SupervisedContext(core.context(for: "p"))
        context.publish(lamp())
        context.markDown()
        #expect(state(core) == .offline)
        context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        #expect(state(core) == .online)
    }

    @Test func deviceThePluginSetOfflineItself_staysOffline_whenItReports() {
        let core = HomeCore()
        let context = SupervisedContext(core.context(for: "p"))
        context.publish(lamp())
        context.markDown()
        context.setConnectivity(.offline, device: "lamp")
        context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        // The core brings back the reported trait only; the host does not overrule the plugin.
        #expect(state(core) == .partiallyOnline)
    }
}
