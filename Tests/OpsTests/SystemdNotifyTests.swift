import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket standing in for systemd's `$NOTIFY_SOCKET`.
final class NotifySocket: Sendable {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw POSIXError(.EADDRINUSE) }
        // A bound on a stuck daemon, not a pace: a message normally arrives at once.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next datagram, or nil after the 60 s bound.
    func receive() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [fd] in
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = recv(fd, &buffer, buffer.count, 0)
                continuation.resume(returning: n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil)
            }
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

/// A hearth.yaml with a scratch database and an empty plugin folder (nothing else runs).
func writeBareConfig(in dir: Scratch, extra: String = "") throws {
    try FileManager.default.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
    try "storage:\n  database: \(dir.at("hearth.sqlite"))\n\(extra)plugins:\n  directories: [\(dir.at("plugins"))]\n"
        .write(toFile: dir.at("hearth.yaml"), atomically: true, encoding: .utf8)
}

/// The real hearthd as systemd runs it with `Type=notify`.
@Suite struct SystemdNotifyTests {
    @Test func hearthd_says_ready_pings_the_watchdog_and_says_stopping() async throws {
        let dir = try Scratch("hearth-notify")
        defer { dir.remove() }
        try writeBareConfig(in: dir)
        let socket = try NotifySocket(path: dir.at("notify"))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: buildDirectory + "/hearthd")
        process.arguments = ["--config", dir.at("hearth.yaml")]
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "100000"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let ended = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in ended.continuation.finish() }
        try process.run()

        let ready = await socket.receive()
        #expect(ready?.contains("READY=1") == true)
        if ready == nil { kill(process.processIdentifier, SIGKILL) }
        let ping = await socket.receive()
        #expect(ping == "WATCHDOG=1")
        process.terminate()  // SIGTERM, as systemctl stop
        var last: String?
        while let message = await socket.receive() {
            last = message
            if message != "WATCHDOG=1" { break }
        }
        #expect(last == "STOPPING=1")
        if last != "STOPPING=1" { kill(process.processIdentifier, SIGKILL) }  // do not wait forever on a failure
        for await _ in ended.stream {}
        #expect(process.terminationStatus == 0)
    }
}

/// `log: { level: warning }`: the change observer does no work (it writes only at info) and the
/// daemon still runs until it is stopped — a service that returned early would stop them all.
@Suite struct QuietLogLevelTests {
    @Test func at_warning_hearthd_runs_writes_no_info_and_stops_cleanly() async throws {
        let dir = try Scratch("hearth-quiet")
        defer { dir.remove() }
        try writeBareConfig(in: dir, extra: "log: { level: warning }\n")
        let socket = try NotifySocket(path: dir.at("notify"))
        let daemon = try Daemon(config: dir.at("hearth.yaml"), in: dir.path, environment: ["NOTIFY_SOCKET": socket.path])
        defer { daemon.stop() }
        let ready = await socket.receive()
        #expect(ready?.contains("READY=1") == true)
        try await Task.sleep(for: .seconds(1))  // long enough for a service that would end at once to end the group
        #expect(daemon.process.isRunning, "hearthd ended by itself: \(daemon.lines)")
        daemon.process.terminate()
        var last: String?
        while let message = await socket.receive() {
            last = message
            if message.contains("STOPPING=1") { break }
        }
        #expect(last?.contains("STOPPING=1") == true)
        await daemon.exited()
        #expect(daemon.process.terminationStatus == 0)
        #expect(!daemon.lines.contains { $0.contains(" info ") || $0.hasPrefix("info") }, "\(daemon.lines)")
    }
}
