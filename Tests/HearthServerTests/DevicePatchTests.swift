import HomeCore
import HomeModel
import Testing

/// `PATCH /devices/{id}` is one edit: a name with a bad room changes nothing.
@Suite struct DevicePatchTests {
    @Test func renameWithAMissingRoom_is404_andKeepsTheOldName() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let before = home.core.state.version
            let reply = try await home.call(
                "PATCH", "devices/test:lamp", token: admin, body: #"{"name":"Reading Lamp","room":"room-nowhere"}"#)
            #expect(reply.status == 404, "\(reply.text)")
            #expect(reply.errorCode == "notFound")
            let lamp = try home.core.home(for: .system).currentDevice(id: TestHome.lamp).snapshot
            #expect(lamp.name == "Lamp")
            #expect(lamp.roomID == TestHome.livingRoom)
            #expect(home.core.state.version == before)
        }
    }

    @Test func renameAndMove_happenTogether() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let before = home.core.state.version
            let reply = try await home.call("PATCH", "devices/test:lamp", token: admin, body: #"{"name":"Reading Lamp","room":null}"#)
            #expect(reply.status == 200, "\(reply.text)")
            let lamp = try home.core.home(for: .system).currentDevice(id: TestHome.lamp).snapshot
            #expect(lamp.name == "Reading Lamp")
            #expect(lamp.roomID == nil)
            #expect(home.core.state.version == before + 1)
        }
    }
}
