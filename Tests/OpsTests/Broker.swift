import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real mosquitto on a free loopback port, optionally refusing anonymous clients.
final class Broker: Sendable {
    let port: Int
    let directory: String
    let process = Mutex<Process?>(nil)

    struct Failure: Error, CustomStringConvertible { let description: String }

    init(users: [String: String] = [:]) async throws {
        port = try Self.freeLoopbackPort()
        directory = NSTemporaryDirectory() + "hearth-doctor-broker-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        var config = "listener \(port) 127.0.0.1\npersistence false\nlog_dest stderr\nlog_type all\n"
        if users.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            let file = directory + "/passwords"
            for (i, (name, password)) in users.sorted(by: { $0.key < $1.key }).enumerated() {
                let r = try await run("/usr/bin/mosquitto_passwd", (i == 0 ? ["-c"] : []) + ["-b", file, name, password], in: directory)
                guard r.status == 0 else { throw Failure(description: "mosquitto_passwd failed: \(r.stderr)") }
            }
            // mosquitto drops to its own user when started as root.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
            config += "allow_anonymous false\npassword_file \(file)\n"
        }
        try config.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try await launch()
    }

    private func launch() async throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", directory + "/mosquitto.conf"]
        let pipe = Pipe()
        p.standardError = pipe
        p.standardOutput = FileHandle.nullDevice
        let (lines, continuation) = AsyncStream<String>.makeStream()
        try p.run()
        process.withLock { $0 = p }
        // Read its log with blocking reads on a thread of its own until it exits.
        Thread.detachNewThread {
            let fd = pipe.fileHandleForReading.fileDescriptor
            var pending = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                pending += String(decoding: buffer[0..<n], as: UTF8.self)
                var parts = pending.components(separatedBy: "\n")
                pending = parts.removeLast()
                for line in parts { continuation.yield(line) }
            }
            continuation.finish()
        }
        var log: [String] = []
        for await line in lines {
            log.append(line)
            if line.contains("running") { return }
        }
        throw Failure(description: "mosquitto did not start:\n" + log.joined(separator: "\n"))
    }

    deinit {
        if let p = process.withLock({ $0 }), p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A port nothing listens on: bind 127.0.0.1:0, read the port, close.
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw Failure(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
