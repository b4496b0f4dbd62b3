public import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Holders of gpio-sim lines for the kernel tests (DoctorKernelTests, GPIOKernelTests): other
// processes, a watch that tells when they have requested their lines, and chips of one's own.

/// A child process that runs until `stop()` (SIGTERM), its output discarded.
public final class Child {
    public let process: Process
    let ended: AsyncStream<Void>
    public var pid: Int32 { process.processIdentifier }

    public init(_ executable: String, _ arguments: [String]) throws {
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

    public func stop() async {
        process.terminate()
        for await _ in ended {}
    }
}

/// The kernel's line-info watch (GPIO v1 uAPI, Linux ≥ 5.7) on some lines of a chip: tells when
/// another process has requested them, so a test waits for that instead of sleeping.
public struct LineWatch {
    let fd: Int32
    var pending: Set<UInt32>

    // <linux/gpio.h>: struct gpioline_info is 72 bytes (offset, flags, name[32], consumer[32]);
    // struct gpioline_info_changed adds timestamp (u64), event_type (u32) and padding[5].
    static let watchIoctl: UInt = 0xC048_B40B  // _IOWR(0xB4, 0x0B, struct gpioline_info)
    static let infoSize = 72
    static let changedSize = 104
    static let requested: UInt32 = 1  // GPIOLINE_CHANGED_REQUESTED

    public init(chip: String, offsets: [UInt32]) throws {
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
    public mutating func waitUntilRequested(timeout: Int32 = 60) throws {
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

    public func close() { Glibc.close(fd) }
}

/// A gpio-sim chip made through configfs for one test (root only), so no other test's
/// processes hold its lines; with `hog`, the kernel itself claims line 0 under that name.
public struct SimChip {
    let root: String
    /// The kernel's name for it: `gpiochip3`.
    public let chip: String

    public init(name: String, lines: Int = 2, hog: String? = nil, label: String? = nil) throws {
        let root = "/sys/kernel/config/gpio-sim/\(name)"
        self.root = root
        let fm = FileManager.default
        func write(_ value: String, _ file: String) throws { try Data(value.utf8).write(to: URL(fileURLWithPath: "\(root)/\(file)")) }
        try fm.createDirectory(atPath: "\(root)/bank0", withIntermediateDirectories: true)
        try write("\(lines)", "bank0/num_lines")
        if let label { try write(label, "bank0/label") }
        if let hog {
            try fm.createDirectory(atPath: "\(root)/bank0/line0/hog", withIntermediateDirectories: true)
            try write(hog, "bank0/line0/hog/name")
            try write("output-high", "bank0/line0/hog/direction")
        }
        try write("1", "live")
        chip = try String(contentsOfFile: "\(root)/bank0/chip_name", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Takes the chip away (as an unplugged expander) or brings it back; the kernel may give
    /// it another name when it returns: ``currentChip`` says which.
    public func setLive(_ live: Bool) throws {
        try Data((live ? "1" : "0").utf8).write(to: URL(fileURLWithPath: "\(root)/live"))
    }

    /// The kernel's name for the chip now (`gpiochip3`).
    public var currentChip: String {
        (try? String(contentsOfFile: "\(root)/bank0/chip_name", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? chip
    }

    /// Sets gpio-sim's pull of a line (what an unconnected input reads): `pull-up` or `pull-down`.
    public func setPull(_ line: Int, _ pull: String) throws {
        let device = try String(contentsOfFile: "\(root)/dev_name", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try Data(pull.utf8).write(to: URL(fileURLWithPath: "/sys/devices/platform/\(device)/\(currentChip)/sim_gpio\(line)/pull"))
    }

    /// Reads one of gpio-sim's per-line attributes (`value` shows what an output drives).
    public func read(_ line: Int, _ attribute: String) throws -> String {
        let device = try String(contentsOfFile: "\(root)/dev_name", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return try String(contentsOfFile: "/sys/devices/platform/\(device)/\(currentChip)/sim_gpio\(line)/\(attribute)", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func remove() {
        try? Data("0".utf8).write(to: URL(fileURLWithPath: "\(root)/live"))
        for dir in ["bank0/line0/hog", "bank0/line0", "bank0", ""] { rmdir("\(root)/\(dir)") }
    }
}
