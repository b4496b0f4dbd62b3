import Foundation
import HearthServer
import HomeCore
import HomeModel
import Testing

/// `/exposure` over real HTTP: admins read and change what leaves the house; members cannot.
@Suite struct ExposureRoutesTests {
    @Test func adminsReadChangeAndResetThePolicy_membersCannot() async throws {
        let settings = try ExposureSettings(store: nil, doors: ["mqtt"])
        try await TestHome.with(exposure: settings) { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            #expect(try await home.call("GET", "exposure", token: member).status == 403)
            #expect(try await home.call("PUT", "exposure", token: member, body: "{}").status == 403)

            let first = try await home.call("GET", "exposure", token: admin)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.text.contains(#""source":"configuration""#))
            #expect(first.text.contains(#""doors":["mqtt"]"#))
            #expect(first.text.contains(#""id":"test:lock","name":"Front Lock","verdict":"sensitive""#), "\(first.text)")

            let put = try await home.call(
                "PUT", "exposure", token: admin, body: #"{"rooms":["Living Room"],"devices":["test:lock"],"allowControl":false}"#)
            #expect(put.status == 200, "\(put.text)")
            #expect(put.text.contains(#""id":"test:lock","name":"Front Lock","verdict":"exposed""#), "\(put.text)")
            #expect(settings.current.devices == ["test:lock"])
            #expect(settings.current.rooms == [TestHome.livingRoom])
            #expect(settings.current.allowControl == false)
            #expect(settings.source == .admin)

            let bad = try await home.call("PUT", "exposure", token: admin, body: #"{"rooms":["Nowhere"]}"#)
            #expect(bad.status == 400, "\(bad.text)")
            #expect(bad.text.contains("Nowhere"))
            #expect(try await home.call("PUT", "exposure", token: admin, body: #"{"colour":"red"}"#).status == 400)
            #expect(settings.current.devices == ["test:lock"], "a refused edit changes nothing")

            let reset = try await home.call("DELETE", "exposure", token: admin)
            #expect(reset.status == 200)
            #expect(settings.current == .default)
            #expect(settings.source == .configuration)
        }
    }

    @Test func withoutExposureSettingsTheRoutesSayNotFound() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let reply = try await home.call("GET", "exposure", token: admin)
            #expect(reply.status == 404)
        }
    }
}
