import DriverAPI
import Foundation
import HomeModel
import PluginHost
import Testing

/// The GPIO plugin is a `.so` the host loads exactly like a third-party plugin.
@Suite struct GPIOPluginLoadingTests {
    /// The directory `swift build` put the test binary and the plugin `.so` files in.
    static var buildDirectory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The test binary may sit inside an .xctest bundle directory.
        while dir.path != "/", !FileManager.default.fileExists(atPath: dir.appendingPathComponent("libPluginKit.so").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }

    @Test func loadsWithIDGPIO_andRefusesBadConfigurationWithLineAndKey() throws {
        let loaded = try PluginLoader.load(Self.buildDirectory + "/libGPIOPlugin.so")
        #expect(loaded.manifest.id == "gpio")
        let bad = PluginConfiguration(
            value: ["lines": [["chip": "sim0", "line": 3, "role": "doorbell"]]], file: "hearth.yaml", keyPath: "plugins.gpio",
            lines: ["lines[0].role": 14])
        #expect {
            try loaded.plugin.validate(configuration: bad)
        } throws: { error in
            "\(error)".contains("hearth.yaml:14: plugins.gpio.lines[0].role") && "\(error)".contains("doorbell")
        }
    }
}
