public import HomeModel
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// How to start an isolated plugin's process.
public struct ChildLaunch: Hashable, Sendable {
    /// The program: `hearthd` itself for a `.so` plugin, or a plugin's own executable.
    public var executable: String
    /// Arguments after the program name.
    public var arguments: [String]
    /// Variables added to (or replacing) the host's environment.
    public var environment: [String: String]

    /// The descriptor number the child finds its end of the socket on.
    public static let childFD: Int32 = 3

    public init(executable: String, arguments: [String], environment: [String: String] = [:]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// `hearthd plugin-host --plugin PATH --fd 3`: the daemon in its plugin-host role, loading a `.so`.
    public static func pluginHost(hearthd: String, plugin: String, environment: [String: String] = [:]) -> ChildLaunch {
        ChildLaunch(
            executable: hearthd, arguments: ["plugin-host", "--plugin", plugin, "--fd", "\(childFD)"], environment: environment)
    }

    /// A plugin that is its own program (any language): run with `--fd 3` and `HEARTH_PLUGIN_FD=3`.
    public static func program(_ path: String, environment: [String: String] = [:]) -> ChildLaunch {
        ChildLaunch(executable: path, arguments: ["--fd", "\(childFD)"], environment: environment)
    }

    /// What this launch runs, for log lines: the `.so` of a `plugin-host` launch, else the program.
    public var pluginPath: String {
        if arguments.first == "plugin-host", let i = arguments.firstIndex(of: "--plugin"), i + 1 < arguments.count {
            return arguments[i + 1]
        }
        return executable
    }

    /// This process's own executable (`/proc/self/exe`), the `hearthd` to start children with.
    public static var currentExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}

/// How a child process ended.
public enum ChildExit: Hashable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signalled(let signal):
            let text = strsignal(signal).map { String(cString: $0) } ?? "unknown"
            return "crashed with signal \(signal) (\(Self.names[signal].map { "\($0), " } ?? "")\(text))"
        }
    }

    static let names: [Int32: String] = [
        SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP", SIGABRT: "SIGABRT",
        SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV", SIGPIPE: "SIGPIPE", SIGTERM: "SIGTERM",
    ]
}

/// A running child process connected to the host by a socket pair.
///
/// `@unchecked Sendable` is not needed: every stored property is an immutable value.
public struct ChildProcess: Sendable {
    public let pid: Int32
    public let channel: FrameChannel

    /// How long the host waits for a child to take a message off its socket: one that has not
    /// read for this long (its buffer of a few hundred KiB full) is hung; the connection is
    /// closed, the child reaped and the plugin restarted, and no host thread waits on it.
    public static let sendDeadline: Duration = .seconds(2)

    /// Starts the child with its end of a fresh socket pair on ``ChildLaunch/childFD``, in its own
    /// process group (a Ctrl-C on the terminal reaches the host, which stops children in order),
    /// with default signal handling and nothing else of the host's open files.
    ///
    /// - Throws: ``HomeError`` `internal` when the socket pair or the process cannot be made.
    public static func spawn(_ launch: ChildLaunch) throws(HomeError) -> ChildProcess {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw .internal("cannot create a socket pair: \(String(cString: strerror(errno)))")
        }
        let hostFD = fds[0]
        // Above the target number, so dup2 always makes a fresh, inheritable copy.
        let childEnd = fcntl(fds[1], F_DUPFD_CLOEXEC, 10)
        _ = Glibc.close(fds[1])
        defer { _ = Glibc.close(childEnd) }
        guard childEnd >= 0 else {
            _ = Glibc.close(hostFD)
            throw .internal("cannot duplicate the child's socket: \(String(cString: strerror(errno)))")
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The child gets stdin/stdout/stderr and this socket only. Not everything the host opens
        // is close-on-exec: SwiftNIO opens its listening and accepted sockets without
        // `SOCK_CLOEXEC`, so the API's and the metrics' listeners would leak into every plugin
        // (which could then accept the admin's requests). Close every descriptor above ours.
        var rc = posix_spawn_file_actions_adddup2(&actions, childEnd, ChildLaunch.childFD)
        if rc == 0 { rc = closeDescriptors(above: ChildLaunch.childFD, in: &actions) }
        guard rc == 0 else {
            _ = Glibc.close(hostFD)
            throw .internal("cannot prepare the child's descriptors: \(String(cString: strerror(rc)))")
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        var environment = ProcessInfo.processInfo.environment
        for (k, v) in launch.environment { environment[k] = v }
        environment["HEARTH_PLUGIN_FD"] = "\(ChildLaunch.childFD)"
        let argv: [UnsafeMutablePointer<CChar>?] = ([launch.executable] + launch.arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        rc = posix_spawn(&pid, launch.executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            _ = Glibc.close(hostFD)
            throw .internal("cannot start \(launch.executable): \(String(cString: strerror(rc)))")
        }
        return ChildProcess(pid: pid, channel: FrameChannel(fd: hostFD, sendDeadline: ChildProcess.sendDeadline))
    }

    /// Adds closing every descriptor above `fd` to `actions`: glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; looked up at run time, as
    /// Swift's Glibc module does not declare it), else one `close` per descriptor open now
    /// that is not close-on-exec.
    static func closeDescriptors(above fd: Int32, in actions: inout posix_spawn_file_actions_t) -> Int32 {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            return unsafeBitCast(symbol, to: CloseFrom.self)(&actions, fd + 1)
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap(Int32.init) ?? []
        for d in open where d > fd && !InheritedDescriptors.isCloseOnExec(d) {
            let rc = posix_spawn_file_actions_addclose(&actions, d)
            if rc != 0 { return rc }
        }
        return 0
    }

    /// Waits for the child to end, blocking the calling thread: the host calls it on the
    /// channel's reader thread once the child has closed its end.
    ///
    /// A child that closes its socket but goes on running gets `grace` to exit, then `SIGKILL`.
    public func reap(grace: Duration = .seconds(5)) -> ChildExit {
        var status: Int32 = 0
        let deadline = ContinuousClock.now.advanced(by: grace)
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { return .exited(-1) }
            if ContinuousClock.now >= deadline {
                _ = Glibc.kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                break
            }
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
            nanosleep(&pause, nil)
        }
        let signal = status & 0x7F
        if signal == 0 { return .exited((status >> 8) & 0xFF) }
        return .signalled(signal)
    }

    /// Sends `SIGKILL` (used when a child ignores `stop` past the shutdown deadline).
    public func kill() { _ = Glibc.kill(pid, SIGKILL) }
}

/// This process's open files, as programs it starts would inherit them.
public enum InheritedDescriptors {
    /// Marks every descriptor above standard error close-on-exec, so no program this process
    /// starts from now on inherits it: not a plugin's process, not the Swift runtime's crash
    /// backtracer (`swift-backtrace`, which otherwise keeps the API's and the metrics'
    /// listening sockets open after a crash, and the restart fails with "address in use").
    ///
    /// SwiftNIO opens its listening and accepted sockets without `SOCK_CLOEXEC`; hearthd calls
    /// this once its listeners are bound.
    /// - Returns: how many descriptors were changed.
    @discardableResult
    public static func markCloseOnExec() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return 0 }
        var changed = 0
        for name in names {
            guard let fd = Int32(name), fd > STDERR_FILENO else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0, flags & FD_CLOEXEC == 0, fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0 { changed += 1 }
        }
        return changed
    }

    /// Whether descriptor `fd` of this process is close-on-exec.
    public static func isCloseOnExec(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFD)
        return flags >= 0 && flags & FD_CLOEXEC != 0
    }
}
