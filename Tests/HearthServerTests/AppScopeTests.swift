import DriverAPI
import Foundation
import HearthAPI
import HearthClient
import HomeCore
import HomeModel
import HomeStorage
import Synchronization
import Testing

/// What an app chooses at connect time (its validation mode) and what an admin chooses at
/// consent (sensitive devices one by one), through the real consent step.
@Suite(.timeLimit(.minutes(1))) struct AppScopeTests {
    /// Connects an app with `configuration`; the admin approves with `approval`.
    func connect(
        _ server: TestHome, admin: String, _ name: String, configuration: HomeClientConfiguration = .init(), approval: String = "{}"
    ) async throws -> HearthClient.Home {
        let (pending, pendingSink) = AsyncStream<HearthClient.Home.PendingConsent>.makeStream()
        async let connected = HearthClient.Home.connect(url: server.baseURL, appName: name, configuration: configuration) { p in
            pendingSink.yield(p)
        }
        var requests = pending.makeAsyncIterator()
        let request = try #require(await requests.next())
        let approved = try await server.call("POST", "apps/requests/\(request.requestID)/approve", token: admin, body: approval)
        #expect(approved.status == 200, "\(approved.text)")
        return try await connected
    }

    @Test func validationMode_isTheAppsChoice_defaultingToTheDaemons() async throws {
        try await TestHome.with(strict: true) { server in
            let admin = try server.adminToken()
            let strictApp = try await connect(server, admin: admin, "Strict")
            let lenientApp = try await connect(server, admin: admin, "Lenient", configuration: .init(strictOperationValidation: false))
            #expect(try await strictApp.me().scope?.strictOperationValidation == nil)
            #expect(try await lenientApp.me().scope?.strictOperationValidation == false)

            let unknown = CommandID(0xFF)
            // Strict (the daemon's default): refused before the driver, as unsupportedOperation.
            do {
                _ = try await strictApp.command(device: TestHome.lamp, type: .name("OnOffLight"), trait: .name("OnOff"), command: .number(unknown.rawValue))
                Issue.record("a strict app's unknown command must be refused")
            } catch {
                #expect((error as? HomeError)?.code == .unsupportedOperation)
            }
            #expect(server.driver.seen.withLock { $0.isEmpty }, "nothing reached the driver")
            // Lenient: sent; the driver's refusal comes back as driverError.
            do {
                _ = try await lenientApp.command(device: TestHome.lamp, type: .name("OnOffLight"), trait: .name("OnOff"), command: .number(unknown.rawValue))
                Issue.record("the driver refuses an unknown command")
            } catch {
                #expect((error as? HomeError)?.code == .driverError)
            }
            #expect(server.driver.seen.withLock { $0.map(\.command) } == [unknown])
        }
    }

    @Test func sensitiveDevices_areChosenOneByOne_atConsent() async throws {
        try await TestHome.with { server in
            let admin = try server.adminToken()
            let without = try await connect(server, admin: admin, "Plain")
            #expect(try await without.devices().list().map(\.id).contains(TestHome.lock) == false)
            let chosen = try await connect(server, admin: admin, "Door Panel", approval: #"{"sensitiveDevices":["test:lock"]}"#)
            #expect(try await chosen.devices().list().map(\.id) == [TestHome.contact, TestHome.lamp, TestHome.lock])
            #expect(try await chosen.me().scope?.sensitiveDevices == [TestHome.lock])
            #expect(try await chosen.me().scope?.includeSensitive == false)
        }
    }
}
