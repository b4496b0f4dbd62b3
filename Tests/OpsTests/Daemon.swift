import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The real hearthd running in the background, its standard error read line by line as it
/// writes them (so a test awaits a log line instead of sleeping).
///
/// ```swift
/// let daemon = try Daemon(config: dir.at("hearth.yaml"), in: dir.path)
/// defer { daemon.stop() }
/// let line = await daemon.line { $0.contains("plugin started") }
/// ```
final class Daemon: Sendable {
    let process: Process
    private let output = Output()
    /// Whether hearthd has exited, and who waits for it (set by the process's termination handler).
    private let exit = Exit()

    /// Whether hearthd has exited, and the waiters for it (shared with the termination handler).
    private final class Exit: Sendable {
        let state = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    }

    /// Every line so far, and the waiters for lines still to come (shared with the reader thread).
    private final class Output: Sendable {
        let state = Mutex<(lines: [String], waiters: [Int: AsyncStream<String>.Continuation], next: Int, ended: Bool)>(([], [:], 0, false))
    }

    /// Starts `hearthd --config config` (plus `arguments`, and `environment` over this process's) in `directory`.
    init(config: String, in directory: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: buildDirectory + "/hearthd")
        process.arguments = ["--config", config] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardError = pipe
        process.terminationHandler = { [exit] _ in
            let waiters = exit.state.withLock { e in
                e.done = true
                defer { e.waiters = [] }
                return e.waiters
            }
            for w in waiters { w.resume() }
        }
        try process.run()
        readLines(
            from: pipe,
            line: { [output] line in
                let waiters = output.state.withLock { s in
                    s.lines.append(line)
                    return Array(s.waiters.values)
                }
                for w in waiters { w.yield(line) }
            },
            end: { [output] in
                let waiters = output.state.withLock { s in
                    s.ended = true
                    return Array(s.waiters.values)
                }
                for w in waiters { w.finish() }
            })
    }

    /// Every line hearthd has written so far.
    var lines: [String] { output.state.withLock { $0.lines } }

    /// The first line (already written or still to come) that satisfies `matches`; nil when
    /// hearthd exits without writing one.
    func line(where matches: @escaping @Sendable (String) -> Bool) async -> String? {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let (id, earlier, ended) = output.state.withLock { s -> (Int, String?, Bool) in
            defer { s.next += 1 }
            let found = s.lines.first(where: matches)
            if found == nil, !s.ended { s.waiters[s.next] = continuation }
            return (s.next, found, s.ended)
        }
        if let earlier { return earlier }
        if ended { return nil }
        defer { _ = output.state.withLock { $0.waiters.removeValue(forKey: id) } }
        for await line in stream where matches(line) { return line }
        return nil
    }

    /// Waits until hearthd has exited, without holding a thread of the concurrency pool
    /// (`Process.waitUntilExit` blocks one, spinning, for as long as the process runs).
    func exited() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let done = exit.state.withLock { e -> Bool in
                if !e.done { e.waiters.append(c) }
                return e.done
            }
            if done { c.resume() }
        }
    }

    /// Stops hearthd (SIGTERM, as `systemctl stop`) and waits for it to exit.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
