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

    /// The rules written out with sets, as the doc comment states them: the aggregate (bit sets)
    /// must agree with it on every list of up to three parts (all 20 kinds of part).
    @Test func aggregateAgreesWithTheRulesForEveryCombination() {
        func rules(_ parts: [SourceConnectivity]) -> SourceConnectivity {
            let known = Set(parts.map(\.connectivityState)).subtracting([.unknown])
            let state: ConnectivityState = known.isEmpty ? .unknown : known == [.online] ? .online : known == [.offline] ? .offline : .partiallyOnline
            let localities = Set(parts.map(\.dataSourceLocality)).subtracting([.unspecified])
            let locality: DataSourceLocality = localities.isEmpty ? .unspecified : localities.count == 1 ? localities.first! : .mixed
            return SourceConnectivity(connectivityState: state, dataSourceLocality: locality)
        }
        let kinds = ConnectivityState.allCases.flatMap { s in DataSourceLocality.allCases.map { Self.c(s, $0) } }
        var lists: [[SourceConnectivity]] = [[]]
        for a in kinds {
            lists.append([a])
            for b in kinds {
                lists.append([a, b])
                for c in kinds { lists.append([a, b, c]) }
            }
        }
        #expect(lists.count == 1 + 20 + 400 + 8000)
        var disagreements: [String] = []
        for parts in lists where SourceConnectivity.aggregate(parts) != rules(parts) {
            disagreements.append("\(parts): \(SourceConnectivity.aggregate(parts)) ≠ \(rules(parts))")
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
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
