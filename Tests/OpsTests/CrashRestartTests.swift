import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// After a crash, the Swift runtime starts `swift-backtrace` from the crashing hearthd. It must
/// not inherit hearthd's listening sockets: a restart right after the crash binds the same ports.
@Suite(.serialized) struct CrashRestartTests {
    /// The inodes of the sockets listening on a local TCP port (`/proc/net/tcp`, state 0A).
    static func listeningInodes(port: Int) throws -> Set<String> {
        // Read to the end: `String(contentsOfFile:)` stops at a /proc file's first page, and the
        // table is longer than that on a machine with many sockets.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { throw CocoaError(.fileReadNoPermission) }
        defer { try? handle.close() }
        let table = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var inodes: Set<String> = []
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] == "0A", let colon = fields[1].lastIndex(of: ":"),
                Int(fields[1][fields[1].index(after: colon)...], radix: 16) == port
            else { continue }
            inodes.insert(String(fields[9]))
        }
        return inodes
    }

    /// A process's descriptors that are sockets with one of `inodes`, with their `fdinfo` flags.
    static func descriptors(of pid: Int32, for inodes: Set<String>) -> [(fd: String, flags: Int)] {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(name)"),
                target.hasPrefix("socket:["), inodes.contains(String(target.dropFirst(8).dropLast()))
            else { return nil }
            let info = (try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(name)", encoding: .utf8)) ?? ""
            let flags = info.split(separator: "\n").first { $0.hasPrefix("flags:") }.flatMap {
                Int($0.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
            }
            return (name, flags ?? 0)
        }
    }

    /// Processes whose parent is `pid`.
    static func children(of pid: Int32) -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name -> Int32? in
            guard let child = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func restartRightAfterACrash_bindsTheSamePorts_whileTheBacktracerRuns() async throws {
        let dir = try Scratch("hearth-crash")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
        let apiPort = try Broker.freeLoopbackPort()
        let metricsPort = try Broker.freeLoopbackPort()
        try """
            storage: {database: \(dir.at("hearth.sqlite"))}
            server: {listen: "127.0.0.1:\(apiPort)"}
            metrics: {listen: "127.0.0.1:\(metricsPort)"}
            """.write(toFile: dir.at("hearth.yaml"), atomically: true, encoding: .utf8)
        // Crash backtraces on, as hearthd runs for real (not interactive: no terminal).
        let environment = ["SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no"]
        let arguments = ["--plugins", dir.at("plugins")]

        let first = try Daemon(config: dir.at("hearth.yaml"), in: dir.path, arguments: arguments, environment: environment)
        #expect(await first.line { $0.contains("API listening") } != nil)
        #expect(await first.line { $0.contains("metrics listening") } != nil)
        let pid = first.process.processIdentifier
        let inodes = try Self.listeningInodes(port: apiPort).union(Self.listeningInodes(port: metricsPort))
        let listeners = Self.descriptors(of: pid, for: inodes)
        #expect(listeners.count == 2, "\(listeners) of the inodes \(inodes)")
        for l in listeners {
            #expect(l.flags & Int(O_CLOEXEC) != 0, "listener fd \(l.fd) is inherited by every program hearthd starts")
        }

        // The crash: the runtime starts swift-backtrace and waits for it.
        kill(pid, SIGSEGV)
        var backtracers: [Int32] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while backtracers.isEmpty && first.process.isRunning && ContinuousClock.now < deadline {
            backtracers = Self.children(of: pid)
            if backtracers.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }
        defer { for b in backtracers { kill(b, SIGKILL) } }
        for b in backtracers {
            #expect(Self.descriptors(of: b, for: inodes).isEmpty, "the backtracer \(b) holds hearthd's listeners")
        }
        // A supervisor that gives up on the crashed process; the backtracer may still run.
        kill(pid, SIGKILL)
        await first.exited()

        let second = try Daemon(config: dir.at("hearth.yaml"), in: dir.path, arguments: arguments, environment: environment)
        defer { second.stop() }
        let listening = await second.line { $0.contains("API listening") || $0.contains("in use") }
        #expect(listening?.contains("API listening") == true, "\(second.lines.suffix(5))")
        #expect(await second.line { $0.contains("metrics listening") || $0.contains("in use") }?.contains("metrics listening") == true)
    }
}
