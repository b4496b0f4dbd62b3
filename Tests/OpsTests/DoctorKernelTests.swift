import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `hearth doctor` (the real binary) against a real kernel's gpio-sim chip, whose lines other
/// processes hold: gpiomon and gpioset (libgpiod 1.6's tools), a running hearthd, and the kernel
/// itself (a gpio-sim hog). Runs inside the VM of `scripts/test-gpio-kernel`, which sets
/// `GPIO_SIM_CHIP`; lines 6 and up are this suite's (GPIOKernelTests uses 0…5 at the same time).
@Suite(
    .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["GPIO_SIM_CHIP"] != nil,
        "GPIO kernel tests skipped: GPIO_SIM_CHIP is not set (no gpio-sim chip here); scripts/test-gpio-kernel runs them in a VM"))
struct DoctorKernelTests {
    static var chip: String { ProcessInfo.processInfo.environment["GPIO_SIM_CHIP"] ?? "" }

    /// A hearth.yaml whose GPIO plugin wants `lines` (id, chip, line), with its database in `dir`.
    static func config(_ lines: [(id: String, chip: String, line: String)], in dir: Scratch) throws -> String {
        let path = dir.at("hearth.yaml")
        try ("storage:\n  database: \(dir.at("hearth.sqlite"))\nplugins:\n  directories: [\(dir.at("plugins"))]\n  gpio:\n    lines:\n"
            + lines.map { "      - { id: \($0.id), chip: \($0.chip), line: \($0.line), role: contact }\n" }.joined())
            .write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
        // The GPIO plugin makes the line checks (DriverPlugin.doctor).
        if !FileManager.default.fileExists(atPath: dir.at("plugins/libGPIOPlugin.so")) {
            try FileManager.default.copyItem(atPath: "\(buildDirectory)/libGPIOPlugin.so", toPath: dir.at("plugins/libGPIOPlugin.so"))
        }
        return path
    }

    func doctor(_ config: String, in dir: Scratch) async throws -> Run {
        try await run(buildDirectory + "/hearth", ["doctor", "--config", config], in: dir.path)
    }

    func line(_ r: Run, _ check: String) -> String {
        r.stdout.split(separator: "\n").first { $0.contains(" \(check): ") }.map(String.init) ?? "(no \(check) line in:\n\(r.stdout)\(r.stderr))"
    }

    @Test func busyLines_nameTheProcessHoldingThem_andAFreeLineIsOK() async throws {
        let dir = try Scratch("hearth-doctor-kernel")
        defer { dir.remove() }
        var watch = try LineWatch(chip: Self.chip, offsets: [6, 7])
        defer { watch.close() }
        let gpiomon = try Child("/usr/bin/gpiomon", [Self.chip, "6"])
        let gpioset = try Child("/usr/bin/gpioset", ["--mode=signal", Self.chip, "7=1"])
        try watch.waitUntilRequested()

        let config = try Self.config(
            [("doorbell", Self.chip, "6"), ("relay", Self.chip, "GPIO7"), ("spare", "/dev/\(Self.chip)", "GPIO8")], in: dir)
        let r = try await doctor(config, in: dir)
        #expect(r.status == 1)
        // Two processes hold lines of the chip through libgpiod 1.6's v1 requests, which the
        // kernel does not name: the consumer names which one.
        #expect(
            line(r, "gpio line \(Self.chip):6 (doorbell)")
                .hasPrefix("PROBLEM  gpio line \(Self.chip):6 (doorbell): busy, held by gpiomon (pid \(gpiomon.pid)) as consumer 'gpiomon'"))
        #expect(line(r, "gpio line \(Self.chip):6 (doorbell)").hasSuffix(": stop it or pick another line"))
        #expect(
            line(r, "gpio line \(Self.chip):7 (relay)")
                .hasPrefix("PROBLEM  gpio line \(Self.chip):7 (relay): busy, held by gpioset (pid \(gpioset.pid)) as consumer 'gpioset'"))
        #expect(line(r, "gpio line \(Self.chip):8 (spare)") == "ok       gpio line \(Self.chip):8 (spare): free")
        // scripts/test-gpio-kernel runs this once per libgpiod: doctor read the lines through that one.
        if let api = ProcessInfo.processInfo.environment["HEARTH_GPIO_EXPECT_API"] {
            #expect(line(r, "gpio library").contains("(v\(api) API"), "\(line(r, "gpio library"))")
        }
        await gpiomon.stop()
        await gpioset.stop()

        let after = try await doctor(config, in: dir)
        #expect(line(after, "gpio line \(Self.chip):6 (doorbell)") == "ok       gpio line \(Self.chip):6 (doorbell): free")
    }

    @Test func aLineHeldByRunningHearthd_isInUseByHearthd_notAProblem() async throws {
        let dir = try Scratch("hearth-doctor-kernel")
        defer { dir.remove() }
        // config() put the GPIO plugin in the folder hearthd runs it from.
        let config = try Self.config([("front-door", Self.chip, "GPIO9")], in: dir)
        var watch = try LineWatch(chip: Self.chip, offsets: [9])
        defer { watch.close() }
        let hearthd = try Child(buildDirectory + "/hearthd", ["--config", config])
        try watch.waitUntilRequested()

        let r = try await doctor(config, in: dir)
        #expect(line(r, "gpio line \(Self.chip):9 (front-door)") == "ok       gpio line \(Self.chip):9 (front-door): in use by hearthd (pid \(hearthd.pid)) as 'hearth:front-door'")
        await hearthd.stop()
    }

    @Test func aLineTheKernelClaims_isExplainedAsTheKernels() async throws {
        let dir = try Scratch("hearth-doctor-kernel")
        defer { dir.remove() }
        // A second gpio-sim chip whose line 0 is hogged: requested by the kernel, by no process.
        let hog = try SimChip(name: "doctor-hog-\(getpid())", hog: "kernel-hog")
        defer { hog.remove() }
        let config = try Self.config([("pump", hog.chip, "0"), ("other", hog.chip, "1")], in: dir)
        let r = try await doctor(config, in: dir)
        #expect(
            line(r, "gpio line \(hog.chip):0 (pump)")
                .hasPrefix("PROBLEM  gpio line \(hog.chip):0 (pump): claimed by the kernel itself as 'kernel-hog', not by a process"))
        #expect(line(r, "gpio line \(hog.chip):1 (other)") == "ok       gpio line \(hog.chip):1 (other): free")
    }
}
