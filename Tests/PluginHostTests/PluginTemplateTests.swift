import DriverAPI
import Foundation
import HomeCore
import HomeModel
import PluginHost
import Testing

/// `templates/plugin` builds, as a package of its own against this checkout's PluginKit, to a
/// `.so` that `hearthd` loads and runs.
///
/// Runs `swift build` on a copy (about a minute: it builds PluginKit too). Set
/// `HEARTH_SKIP_TEMPLATE_BUILD=1` to skip it while iterating.
@Suite(.timeLimit(.minutes(10))) struct PluginTemplateTests {
    static var enabled: Bool {
        if ProcessInfo.processInfo.environment["HEARTH_SKIP_TEMPLATE_BUILD"] == "1" {
            print("PluginTemplateTests skipped: HEARTH_SKIP_TEMPLATE_BUILD=1")
            return false
        }
        return true
    }

    @Test(.enabled(if: enabled)) func templateBuildsToAPluginThatHearthdLoadsAndRuns() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let package = dir.path + "/my-plugin"
        let template = repositoryRoot + "/templates/plugin"
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        for item in ["Package.swift", "Sources", "Tests"] {
            try FileManager.default.copyItem(atPath: "\(template)/\(item)", toPath: "\(package)/\(item)")
        }

        let build = try await runProcess(
            "/usr/bin/env", ["swift", "build", "--package-path", package, "--product", "MyPlugin"],
            environment: ["HEARTH_PLUGINKIT": repositoryRoot + "/Plugins/PluginKit"])
        try #require(build.status == 0, "swift build of the template failed:\n\(build.stderr)")
        #expect(!build.stderr.contains("warning:"), "\(build.stderr)")
        let products = package + "/.build/debug"
        let so = products + "/libMyPlugin.so"
        #expect(FileManager.default.fileExists(atPath: so))

        // hearthd finds it in its plugin folder and accepts it and its configuration.
        let config = try dir.write(
            "hearth.yaml",
            """
            plugins:
              directories: [\(products)]
              my-plugin:
                lamps:
                  - {id: desk, name: Desk Lamp}
            """)
        let check = try await runProcess(hearthd, ["--config", config, "--check"])
        #expect(check.status == 0, "\(check.stderr)")

        // And it runs: in a hearthd child process, serving the core.
        let core = HomeCore()
        let plan = PluginSetup.plan(
            directories: [products],
            sections: ["my-plugin": section("my-plugin", ["isolated": true, "lamps": [["id": "desk", "name": "Desk Lamp"]]])],
            core: core, clock: ContinuousClock(), hearthd: hearthd, childEnvironment: childEnvironment, logger: testLogger)
        #expect(plan.registry.statuses().map(\.state) == [.starting])
        let desk = DeviceID(plugin: "my-plugin", local: "desk")
        try await withServices(plan.services) {
            await waitForDevice(core, desk) { connectivity($0) == .online }
            _ = try await core.home(for: .system).invoke(
                CommandRequest(device: desk, deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle))
            await waitForDevice(core, desk) { $0.types.first?.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff] == true }
        }
    }
}
