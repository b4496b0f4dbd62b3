import DriverAPI
import Foundation
import HomeCore
import HomeModel
import HomeStorage
import PluginHost
import Testing

/// The real Demo `.so`, loaded with dlopen, against a real SQLite file: what the configuration
/// pre-commissions is in the database, and a restart brings it back; restore-on-start sends
/// the saved state to the real plugin.
@Suite struct PersistentDemoTests {
    static func demoLibrary() throws -> String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("libDemoPlugin.so").path
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        Issue.record("libDemoPlugin.so not found next to \(dir.path): run `swift build --build-tests` first")
        throw HomeError.notFound("libDemoPlugin.so")
    }

    static func tempDatabase() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-demo-\(UUID().uuidString)")
        return dir.appendingPathComponent("var/hearth.sqlite").path
    }

    /// Runs the plugin until all three demo devices are commissioned, then stops it.
    static func run(_ loaded: LoadedPlugin, core: HomeCore, room: String?) async throws {
        try await run(loaded, core: core, room: room) {
            for await set in core.home(for: .system).devices().batched() where set.count == 3 { break }
        }
    }

    /// Runs the plugin until `until` returns, then stops it.
    static func run(
        _ loaded: LoadedPlugin, core: HomeCore, room: String?, until: @Sendable () async -> Void
    ) async throws {
        let config: Value = room.map { .object(["interval": .double(3600), "room": .string($0)]) } ?? .object(["interval": .double(3600)])
        let context = core.context(
            for: loaded.manifest.id,
            configuration: PluginConfiguration(value: config, file: "test.yaml", keyPath: "plugins.demo"))
        struct Handler: CommandHandler {
            let loaded: LoadedPlugin
            let context: any DriverContext
            func handle(_ command: DriverCommand) async throws -> Value { try await loaded.plugin.handle(command, context: context) }
            func write(_ write: DriverWrite) async throws { try await loaded.plugin.write(write, context: context) }
        }
        core.setCommandHandler(Handler(loaded: loaded, context: context), for: loaded.manifest.id)
        let task = Task { try await loaded.plugin.run(context: context) }
        await until()
        task.cancel()
        _ = await task.result
        core.setCommandHandler(nil, for: loaded.manifest.id)
    }

    @Test func preCommissionedDemoDevices_surviveARestart() async throws {
        let loaded = try PluginLoader.load(try Self.demoLibrary())
        let path = Self.tempDatabase()
        do {
            let db = try HearthDatabase(path: path)
            let core = HomeCore(store: db)
            try core.restore()
            try await Self.run(loaded, core: core, room: "Living Room")
        }
        let db = try HearthDatabase(path: path)
        let core = HomeCore(store: db)
        try core.restore()
        let home = core.home(for: .system)
        let devices = try await home.devices().list()
        let rooms = try await home.rooms().list()
        #expect(Set(devices.map(\.name)) == ["Thermometer", "Lamp", "Button"])
        #expect(rooms.map(\.name) == ["Living Room"])
        #expect(devices.allSatisfy { $0.snapshot.roomID == rooms.first?.id })
        #expect(try db.registry().allSatisfy { $0.connectivity == .online && $0.firstSeen > 0 })
    }

    @Test func restoreOnStart_switchesTheRealLampBackOn() async throws {
        let loaded = try PluginLoader.load(try Self.demoLibrary())
        let path = Self.tempDatabase()
        let lamp = DeviceID(plugin: "demo", local: "lamp")
        do {
            let db = try HearthDatabase(path: path)
            let core = HomeCore(store: db)
            try await Self.run(loaded, core: core, room: "Den")
            try db.setRestoreOnStart(.on, for: lamp)
        }
        let db = try HearthDatabase(path: path)
        let core = HomeCore(store: db)
        try core.restore()
        let plan = try db.restorePlan()
        #expect(plan == [lamp: true])
        let restorer = OutputRestorer(core: core, plan: plan)
        let restoring = Task { await restorer.run() }
        try await Self.run(loaded, core: core, room: "Den") {
            // The lamp's own subscription wakes on attribute changes too.
            for await device in core.home(for: .system).device(id: lamp) where device.snapshot.onOffValue == true { break }
        }
        let outcomes = await restoring.value
        #expect(outcomes == [OutputRestorer.Outcome(device: lamp, sent: true, error: nil)])
        #expect(try db.registryEntry(lamp)?.lastOnOff == true)
    }
}
