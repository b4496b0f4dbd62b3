import DriverAPI
import Foundation
import HearthClient
import HomeModel
import HomeStorage
import Testing

/// The seed's client snippet, ported to `HearthClient` over a real server: the same calls
/// read naturally against the network.
@Suite(.timeLimit(.minutes(1))) struct SeedSnippetTests {
    @Test func seedSnippet_runsOverTheNetwork() async throws {
        try await TestHome.with { server in
            _ = try server.memberToken()
            let home = try await Home.signIn(url: server.baseURL, username: "mia", password: "member password")

            let devices = try await home.devices().list()
            #expect(devices.count == 3)
            var sawSet = false
            for await snapshot in home.devices().batched() {  // whole set on every change
                #expect(snapshot.map(\.name).sorted() == ["Door", "Front Lock", "Lamp"])
                sawSet = true
                break
            }
            #expect(sawSet)
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
            var sawOn = false
            for await lamp in device.types.subscribe(OnOffLightDeviceType.self) {
                if lamp.matterTraits.onOffTrait?.attributes.onOff == true {
                    sawOn = true
                    break
                }
            }
            #expect(sawOn, "the toggle comes back through types.subscribe")

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

    @Test func clientChangedDevices_givesEveryDeviceThenTheOnesThatChanged() async throws {
        try await TestHome.with { server in
            _ = try server.memberToken()
            let home = try await Home.signIn(url: server.baseURL, username: "mia", password: "member password")
            var it = home.changedDevices().makeAsyncIterator()
            let first = try #require(await it.next())
            #expect(first.map(\.id.rawValue) == ["test:door", "test:lamp", "test:lock"])
            server.driver.context.report("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, false)
            let next = try #require(await it.next())
            #expect(next.map(\.id.rawValue) == ["test:door"])
            let state = next.first?.snapshot.type(ContactSensorDeviceType.identifier)?.traits[BooleanStateTrait.identifier]?[
                BooleanStateTrait.Attribute.stateValue]
            #expect(state == .bool(false))
        }
    }

    @Test func clientStream_deliversSnapshotThenChanges_andEndsWhenRevoked() async throws {
        try await TestHome.with { server in
            let admin = try await Home.setup(url: server.baseURL, code: try #require(try server.access.bootstrap()), password: "correct horse")
            _ = try server.memberToken()
            let member = try await Home.signIn(url: server.baseURL, username: "mia", password: "member password")
            var seen: [String] = []
            for await change in member.rooms().stream() {
                switch change {
                case .snapshot(let rooms, _):
                    seen.append("snapshot \(rooms.count)")
                    _ = try await admin.createRoom(named: "Kitchen", in: TestHome.structure)
                case .added(let room):
                    seen.append("added \(room.name)")
                    try await member.disconnect()
                case .updated(let room): seen.append("updated \(room.name)")
                case .removed(let id): seen.append("removed \(id)")
                }
            }
            #expect(seen == ["snapshot 1", "added Kitchen"], "the stream ends once the session is revoked")
            await #expect(throws: HomeError.self) { _ = try await member.rooms().list() }
        }
    }
}

