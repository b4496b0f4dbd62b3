import Foundation
import Testing
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
        await gpiomon.stop()
        await gpioset.stop()

        let after = try await doctor(config, in: dir)
        #expect(line(after, "gpio line \(Self.chip):6 (doorbell)") == "ok       gpio line \(Self.chip):6 (doorbell): free")
    }

    @Test func aLineHeldByRunningHearthd_isInUseByHearthd_notAProblem() async throws {
        let dir = try Scratch("hearth-doctor-kernel")
        defer { dir.remove() }
        let config = try Self.config([("front-door", Self.chip, "GPIO9")], in: dir)
        try FileManager.default.copyItem(atPath: buildDirectory + "/libGPIOPlugin.so", toPath: dir.at("plugins/libGPIOPlugin.so"))
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
        let hog = try HoggedChip(name: "doctor-hog-\(getpid())", hog: "kernel-hog")
        defer { hog.remove() }
        let config = try Self.config([("pump", hog.chip, "0"), ("other", hog.chip, "1")], in: dir)
        let r = try await doctor(config, in: dir)
        #expect(
            line(r, "gpio line \(hog.chip):0 (pump)")
                .hasPrefix("PROBLEM  gpio line \(hog.chip):0 (pump): claimed by the kernel itself as 'kernel-hog', not by a process"))
        #expect(line(r, "gpio line \(hog.chip):1 (other)") == "ok       gpio line \(hog.chip):1 (other): free")
    }
}

// MARK: - Helpers

/// A child process that runs until `stop()` (SIGTERM), its output discarded.
final class Child {
    let process: Process
    let ended: AsyncStream<Void>
    var pid: Int32 { process.processIdentifier }

    init(_ executable: String, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        ended = stream
        process.terminationHandler = { _ in continuation.finish() }
        try process.run()
    }

    func stop() async {
        process.terminate()
        for await _ in ended {}
    }
}

/// The kernel's line-info watch (GPIO v1 uAPI, Linux ≥ 5.7) on some lines of a chip: tells when
/// another process has requested them, so a test waits for that instead of sleeping.
struct LineWatch {
    let fd: Int32
    var pending: Set<UInt32>

    // <linux/gpio.h>: struct gpioline_info is 72 bytes (offset, flags, name[32], consumer[32]);
    // struct gpioline_info_changed adds timestamp (u64), event_type (u32) and padding[5].
    static let watchIoctl: UInt = 0xC048_B40B  // _IOWR(0xB4, 0x0B, struct gpioline_info)
    static let infoSize = 72
    static let changedSize = 104
    static let requested: UInt32 = 1  // GPIOLINE_CHANGED_REQUESTED

    init(chip: String, offsets: [UInt32]) throws {
        fd = open("/dev/\(chip)", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        pending = Set(offsets)
        for offset in offsets {
            var info = [UInt8](repeating: 0, count: Self.infoSize)
            withUnsafeBytes(of: offset.littleEndian) { info.replaceSubrange(0..<4, with: $0) }
            let rc = info.withUnsafeMutableBytes { ioctl(fd, Self.watchIoctl, $0.baseAddress!) }
            guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
    }

    /// Returns once every watched line has been requested; fails after `timeout` seconds.
    mutating func waitUntilRequested(timeout: Int32 = 60) throws {
        while !pending.isEmpty {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, timeout * 1000) == 1 else {
                throw POSIXError(.ETIMEDOUT, userInfo: [NSLocalizedDescriptionKey: "lines \(pending.sorted()) were never requested"])
            }
            var event = [UInt8](repeating: 0, count: Self.changedSize)
            let n = event.withUnsafeMutableBytes { read(fd, $0.baseAddress!, Self.changedSize) }
            guard n == Self.changedSize else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            let offset = event.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self) }
            let type = event.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: Self.infoSize + 8, as: UInt32.self) }
            if type == Self.requested { pending.remove(offset) }
        }
    }

    func close() { Glibc.close(fd) }
}

/// A gpio-sim chip made through configfs for one test, with a hogged line 0.
struct HoggedChip {
    let root: String
    let chip: String

    init(name: String, hog: String) throws {
        let root = "/sys/kernel/config/gpio-sim/\(name)"
        self.root = root
        let fm = FileManager.default
        try fm.createDirectory(atPath: "\(root)/bank0/line0/hog", withIntermediateDirectories: true)
        func write(_ value: String, _ file: String) throws { try Data(value.utf8).write(to: URL(fileURLWithPath: "\(root)/\(file)")) }
        try write("2", "bank0/num_lines")
        try write(hog, "bank0/line0/hog/name")
        try write("output-high", "bank0/line0/hog/direction")
        try write("1", "live")
        chip = try String(contentsOfFile: "\(root)/bank0/chip_name", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func remove() {
        try? Data("0".utf8).write(to: URL(fileURLWithPath: "\(root)/live"))
        for dir in ["bank0/line0/hog", "bank0/line0", "bank0", ""] { rmdir("\(root)/\(dir)") }
    }
}
