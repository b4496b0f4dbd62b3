import HomeModel
import Testing

@Suite struct ConnectivityTests {
    static func c(_ s: ConnectivityState, _ l: DataSourceLocality = .local) -> SourceConnectivity {
        SourceConnectivity(connectivityState: s, dataSourceLocality: l)
    }

    @Test(arguments: [
        ([ConnectivityState.online, .online], ConnectivityState.online),
        ([.offline, .offline], .offline),
        ([.online, .offline], .partiallyOnline),
        ([.online, .partiallyOnline], .partiallyOnline),
        ([.unknown, .unknown], .unknown),
        ([.online, .unknown], .online),
        ([], .unknown),
    ])
    func aggregatesConnectivity(parts: [ConnectivityState], expected: ConnectivityState) {
        #expect(SourceConnectivity.aggregate(parts.map { Self.c($0) }).connectivityState == expected)
    }

    @Test func localAndRemoteAggregateToMixed() {
        let agg = SourceConnectivity.aggregate([Self.c(.online, .local), Self.c(.online, .remote)])
        #expect(agg.dataSourceLocality == .mixed)
        #expect(SourceConnectivity.aggregate([Self.c(.online, .remote), Self.c(.online, .remote)]).dataSourceLocality == .remote)
    }

    @Test func deviceTypeMetadataAggregatesItsTraits() {
        let state = DeviceTypeState(
            id: OnOffLightDeviceType.identifier, isPrimary: true,
            traits: [
                OnOffTrait.identifier: TraitState(id: OnOffTrait.identifier, attributes: [OnOffTrait.Attribute.onOff: true], sourceConnectivity: Self.c(.online)),
                IdentifyTrait.identifier: TraitState(id: IdentifyTrait.identifier, sourceConnectivity: Self.c(.offline)),
            ])
        let light = OnOffLightDeviceType(state: state, binding: TraitBinding(device: "x:y", deviceType: OnOffLightDeviceType.identifier, backend: nil))
        #expect(light.metadata.isPrimaryType)
        #expect(light.metadata.sourceConnectivity.connectivityState == .partiallyOnline)
        #expect(light.matterTraits.onOffTrait?.metadata.sourceConnectivity.connectivityState == .online)
        #expect(light.matterTraits.onOffTrait?.attributes.onOff == true)
        #expect(light.matterTraits.levelControlTrait == nil)
    }
}
