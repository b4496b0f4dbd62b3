import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import PluginHost
import ServiceLifecycle
import Testing

/// Strict and lenient validation with the real Demo plugin (its `.so`): strict refuses an
/// unknown command before the plugin sees it (`unsupportedOperation`); lenient sends it, and
/// the plugin's own refusal comes back as `driverError`, which an app tells from a refusal.
/// An app's own choice (its grant's `strictOperationValidation`) wins over the daemon's.
@Suite(.timeLimit(.minutes(1))) struct LenientValidationTests {
    func withDemo(strict: Bool, _ body: @escaping @Sendable (HomeCore) async throws -> Void) async throws {
        let loaded = try PluginLoader.load(BuildProducts.path("DemoPlugin"))
        let core = HomeCore(strictOperationValidation: strict)
        let config = PluginConfiguration(value: ["interval": 60, "room": "Living Room"], file: "test.yaml", keyPath: "plugins.demo")
        let service = PluginService(loaded, core: core, configuration: config, clock: ContinuousClock(), logger: Logger(label: "test"))
        try await withServices([service]) {
            for await set in core.home(for: .system).devices().batched() where set[id: "demo:lamp"] != nil { break }
            try await body(core)
        }
    }

    func code(_ home: Home, _ command: CommandID) async -> HomeError.Code? {
        do {
            _ = try await home.invoke(lampCommand("demo", command))
            return nil
        } catch {
            return (error as? HomeError)?.code
        }
    }

    @Test func strictRefuses_lenientReportsTheDriversError() async throws {
        try await withDemo(strict: true) { core in
            let home = core.home(for: .system)
            #expect(await code(home, CommandID(0xFF)) == .unsupportedOperation)
            #expect(await code(home, OnOffTrait.Command.toggle) == nil, "a supported command works")
            // An app that chose lenient at connect time.
            let lenient = core.home(
                for: Principal(
                    id: "app:Panel", role: .app, scope: GrantScope(deviceTypes: nil, includeSensitive: false, strictOperationValidation: false),
                    sessionID: "s-lenient"))
            #expect(await code(lenient, CommandID(0xFF)) == .driverError, "the demo plugin's own refusal")
        }
        try await withDemo(strict: false) { core in
            let home = core.home(for: .system)
            #expect(await code(home, CommandID(0xFF)) == .driverError)
            // An app that chose strict on a lenient daemon.
            let strict = core.home(
                for: Principal(
                    id: "app:Panel", role: .app, scope: GrantScope(deviceTypes: nil, includeSensitive: false, strictOperationValidation: true),
                    sessionID: "s-strict"))
            #expect(await code(strict, CommandID(0xFF)) == .unsupportedOperation)
        }
    }
}
