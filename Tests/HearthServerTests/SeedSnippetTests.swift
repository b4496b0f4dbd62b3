import Foundation
import HearthClient
import HomeModel
import Testing

/// The seed's client snippet, ported to `HearthClient` over a real server: the same calls
/// read naturally against the network.
@Suite struct SeedSnippetTests {
    @Test func seedSnippet_runsOverTheNetwork() async throws {
        try await TestHome.with { server in
            _ = try server.memberToken()
            let home = try await Home.signIn(url: server.baseURL, username: "mia", password: "member password")

            let devices = try await home.devices().list()
            #expect(devices.count == 3)
            for await snapshot in home.devices().batched() {  // whole set on every change
                #expect(snapshot.map(\.name).sorted() == ["Door", "Front Lock", "Lamp"])
                break
            }
            let device = try #require(devices.first { $0.name == "Lamp" })
            if let light = await device.types.get(OnOffLightDeviceType.self),
                let onOff = light.matterTraits.onOffTrait
            {
                #expect(onOff.attributes.onOff == false)
                #expect(light.metadata.isPrimaryType)
                try await onOff.toggle()
            } else {
                Issue.record("the lamp has no On/Off Light type")
            }
            for await lamp in device.types.subscribe(OnOffLightDeviceType.self) {
                if lamp.matterTraits.onOffTrait?.attributes.onOff == true { break }
            }

            var changes: [String] = []
            for await change in home.rooms().stream() {
                if case .snapshot(let rooms, _) = change {
                    changes.append("snapshot \(rooms.map(\.name))")
                    break
                }
            }
            #expect(changes == ["snapshot [\"Living Room\"]"])
        }
    }
}
