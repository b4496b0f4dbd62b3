import DriverAPI
import DriverTesting
import Foundation
import GPIOKit
import HomeModel
import Testing

/// The shim's run-time choice of libgpiod, on this machine's real libraries.
@Suite struct GPIOLibraryTests {
    static let childMarker = "HEARTH_GPIO_TEST_WITHOUT_LIBGPIOD"

    @Test func aLibgpiodIsLoaded_andDescribesItself() {
        let library = GPIOLibrary.current
        let expected = ProcessInfo.processInfo.environment["HEARTH_GPIO_EXPECT_API"].flatMap { Int($0) }
        #expect(library.api == (expected ?? library.api) && library.api != nil, "\(library)")
        #expect(library.description.hasPrefix("libgpiod \(library.version) (v\(library.api ?? 0) API, libgpiod.so."), "\(library)")
        #expect(library.path.contains("libgpiod.so."), "\(library.path)")
        #expect(library.hasKernelDebounce == (library.api == 2))
        let report = GPIOLibrary.doctorReport(dev: "/nonexistent-dev")
        #expect(!report.isProblem, "\(report)")
        #expect(report.explanation.contains(library.description) && report.explanation.contains("no /nonexistent-dev/gpiochip* device"), "\(report)")
    }

    /// The test binary runs itself with HEARTH_LIBGPIOD naming a library that does not exist:
    /// the child plays a machine with neither libgpiod installed.
    @Test func withoutLibgpiod_oneErrorNamesThePackages_andSimulatedLinesKeepWorking() async throws {
        guard ProcessInfo.processInfo.environment[Self.childMarker] == nil else { return }
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: exe)
        child.arguments = ["--testing-library", "swift-testing", "--filter", "GPIOLibraryTests/withoutLibgpiod_child"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childMarker] = "1"
        environment["HEARTH_LIBGPIOD"] = "/nonexistent/libgpiod.so.3"
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0, "\(text)")
        #expect(text.contains("withoutLibgpiod_child") && text.contains("passed"), "\(text)")
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment[GPIOLibraryTests.childMarker] != nil))
    func withoutLibgpiod_child() async throws {
        let library = GPIOLibrary.current
        #expect(library.api == nil)
        #expect(library.description.contains("install the package libgpiod3 (Debian 13, Raspberry Pi OS Trixie) or libgpiod2 (Debian 12, Raspberry Pi OS Bookworm)"), "\(library)")
        #expect(GPIOLibrary.doctorReport().isProblem)
        let host = TestHost(
            pluginID: "gpio",
            configuration: [
                "simulated": [["chip": "sim0", "lines": 2]],
                "lines": [
                    ["id": "a", "chip": "gpiochip0", "line": 1, "role": "contact"],
                    ["id": "b", "chip": "gpiochip0", "line": 2, "role": "relay"],
                    ["id": "sim", "chip": "sim0", "line": 0, "role": "contact"],
                ],
            ])
        let sim = GPIOSimulator()
        let task = try host.start(GPIODriverPlugin(clock: host.clock, simulator: sim))
        await host.wait { $0.connectivity(of: "a") == .offline && $0.connectivity(of: "b") == .offline }
        try sim.setPull(chip: "sim0", line: "0", high: true)
        await host.wait { $0.value("sim", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue) == .bool(true) }
        let errors = host.logLines.filter { $0.hasPrefix("error:") }
        #expect(errors.count == 1, "one error for the plugin, not one per line: \(errors)")
        #expect(errors.first?.contains("libgpiod not found") == true && errors.first?.contains("libgpiod3") == true, "\(errors)")
        #expect(host.clock.sleeperCount == 0, "nothing to retry: installing the library needs a restart")
        task.cancel()
        _ = await task.result
    }
}
