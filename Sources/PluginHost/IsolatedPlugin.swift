public import DriverAPI
public import HomeModel
import Foundation
import Synchronization

/// Why a plugin run ended in a way the supervisor must treat specially.
public struct PluginRunError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Kind: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The plugin refused its configuration: restarting cannot help.
        public static let invalidConfiguration = Kind(rawValue: "invalidConfiguration")
        /// The child is not the plugin configured, or speaks another protocol version: restarting cannot help.
        public static let incompatible = Kind(rawValue: "incompatible")
        /// The child process ended (crashed, or exited) while it should have run.
        public static let processEnded = Kind(rawValue: "processEnded")
        /// The child sent something that is not the protocol.
        public static let protocolViolation = Kind(rawValue: "protocolViolation")
        /// The plugin's `run` threw inside the child.
        public static let failed = Kind(rawValue: "failed")
        /// The child did not send `hello` within ``IsolatedPlugin/helloTimeout`` and was killed.
        public static let noHello = Kind(rawValue: "noHello")
        /// The child did not answer a liveness ping within ``IsolatedPlugin/pingTimeout`` and was killed.
        public static let unresponsive = Kind(rawValue: "unresponsive")
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Whether restarting the plugin could help.
    public var isPermanent: Bool { kind == .invalidConfiguration || kind == .incompatible }
    public var description: String { message }
}

/// Set once, from the reader thread, when the child has been reaped; awaited without regard to
/// cancellation (a stopping host must still reap its child).
final class ExitSignal: Sendable {
    let state = Mutex<(how: String?, waiters: [CheckedContinuation<String, Never>])>((nil, []))

    func signal(_ how: String) {
        let waiters = state.withLock { s in
            s.how = how
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume(returning: how) }
    }

    func wait() async -> String {
        await withCheckedContinuation { (c: CheckedContinuation<String, Never>) in
            let how = state.withLock { s -> String? in
                if s.how == nil { s.waiters.append(c) }
                return s.how
            }
            if let how { c.resume(returning: how) }
        }
    }
}

/// A plugin that runs in its own process: the host side of isolated mode.
///
/// Each ``run(context:)`` starts a child (`hearthd plugin-host --plugin PATH`, or a plugin's
/// own program), sends it the configuration, and applies what the child reports to `context`
/// until the child ends; commands and writes are forwarded and their results awaited. A child
/// that crashes ends the run with ``PluginRunError`` `processEnded`, so the ``PluginService``
/// supervising this plugin restarts it with the same backoff as an in-process plugin. A child
/// that does not say `hello` within ``helloTimeout`` is killed and ends the run with `noHello`,
/// restarted the same way. A child that says in its `hello` that it answers pings
/// (`"ping": true`; `hearthd plugin-host` does) is pinged every ``pingInterval``; one that leaves
/// a ping unanswered for ``pingTimeout`` is hung: it is killed and the run ends with
/// `unresponsive`, restarted like a crash (its devices offline meanwhile). The wire format is
/// `docs/plugin-protocol.md`.
public final class IsolatedPlugin: DriverPlugin {
    /// What the host knows before the child says hello (from the loaded `.so`, or from the configuration).
    public let manifest: PluginManifest
    public let launch: ChildLaunch
    /// How long a child may take to stop after `stop` before it is killed.
    public let stopGrace: Duration
    /// How long a child may take from being started to its `hello` before it is killed
    /// (`plugins.<id>.helloTimeout` in `hearth.yaml`).
    public let helloTimeout: Duration

    /// How often a child that answers pings is pinged (`plugins.<id>.pingInterval`).
    public let pingInterval: Duration
    /// How long a ping may go unanswered before the child counts as hung (`plugins.<id>.pingTimeout`).
    public let pingTimeout: Duration

    /// The default ``helloTimeout``.
    public static let defaultHelloTimeout: Duration = .seconds(30)
    /// The default ``pingInterval``.
    public static let defaultPingInterval: Duration = .seconds(15)
    /// The default ``pingTimeout``.
    public static let defaultPingTimeout: Duration = .seconds(10)

    /// Adds the vendor traits a program's `hello` declares to the running catalogue (the host
    /// passes HomeCore's `addVendorTraits`); a refusal refuses the plugin.
    let declareVendorTraits: @Sendable ([TraitDescriptor]) throws(HomeError) -> Void

    struct Running {
        let process: ChildProcess
        var pending: [Int64: CheckedContinuation<Value, any Error>] = [:]
        var stopping = false
        /// Whether this process has said `hello`.
        var greeted = false
        /// Set by the hello watchdog when it kills a process that did not say `hello` in time.
        var helloTimedOut = false
        /// Waits ``IsolatedPlugin/helloTimeout`` for `hello`; cancelled when it comes.
        var helloWatchdog: Task<Void, Never>?
        /// Whether the child said in its `hello` that it answers pings.
        var answersPings = false
        /// The highest ping number the child answered.
        var lastPong: Int64 = 0
        /// Set by the liveness watchdog when it kills a process that left a ping unanswered.
        var unresponsive = false
    }

    struct State {
        var running: Running?
        var nextRequest: Int64 = 0
        var helloManifest: PluginManifest?
        var pid: Int32?
        /// Pings answered, by every process of this plugin (for status and tests).
        var pongs = 0
    }

    let state = Mutex(State())
    let observers = Mutex<[@Sendable () -> Void]>([])

    /// The clock ``stopGrace`` and ``helloTimeout`` are measured on.
    let clock: any Clock<Duration>
    /// The clock the liveness pings run on: apart from `clock` (the hello and stop deadlines),
    /// so a test can drive one without the other's sleepers in its way.
    let pingClock: any Clock<Duration>

    public init(
        manifest: PluginManifest, launch: ChildLaunch, stopGrace: Duration = .seconds(5),
        helloTimeout: Duration = IsolatedPlugin.defaultHelloTimeout, pingInterval: Duration = IsolatedPlugin.defaultPingInterval,
        pingTimeout: Duration = IsolatedPlugin.defaultPingTimeout, clock: any Clock<Duration> = ContinuousClock(),
        pingClock: any Clock<Duration> = ContinuousClock(),
        declareVendorTraits: @escaping @Sendable ([TraitDescriptor]) throws(HomeError) -> Void = { _ in }
    ) {
        self.declareVendorTraits = declareVendorTraits
        self.manifest = manifest
        self.launch = launch
        self.stopGrace = stopGrace
        self.helloTimeout = helloTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.clock = clock
        self.pingClock = pingClock
    }

    /// Calls `observer` whenever a child starts, says hello or ends (the supervisor refreshes
    /// the plugin's status then).
    public func onChange(_ observer: @escaping @Sendable () -> Void) { observers.withLock { $0.append(observer) } }

    func changed() { for o in observers.withLock({ $0 }) { o() } }

    /// The manifest the child announced in its last `hello` (nil before the first).
    public var announcedManifest: PluginManifest? { state.withLock { $0.helloManifest } }
    /// The child's process ID while one runs.
    public var processID: Int32? { state.withLock { $0.running?.process.pid } }
    /// How many liveness pings the children of this plugin have answered.
    public var answeredPings: Int { state.withLock { $0.pongs } }

    public func run(context: any DriverContext) async throws {
        let process = try ChildProcess.spawn(launch)
        defer { process.channel.close() }
        state.withLock { $0.running = Running(process: process) }
        changed()
        let exit = ExitSignal()
        let incoming = process.channel.incoming(
            consume: { self.recordPong($0) },
            afterEnd: { [grace = stopGrace] in
                let how = process.reap(grace: grace).description
                exit.signal(how)
                return how
            })
        // Killed when it has not said hello in time; the reader loop then ends with the socket.
        let helloWatchdog = Task.detached { [clock, helloTimeout] in
            do { try await clock.sleep(for: helloTimeout) } catch { return }
            let overdue = self.state.withLock { s -> Bool in
                guard s.running?.process.pid == process.pid, s.running?.greeted == false else { return false }
                s.running?.helloTimedOut = true
                return true
            }
            if overdue { process.kill() }
        }
        state.withLock { $0.running?.helloWatchdog = helloWatchdog }
        defer { helloWatchdog.cancel() }
        let liveness = livenessWatchdog(process)
        defer { liveness.cancel() }
        var failure: PluginRunError?
        do {
            try process.channel.send(
                [
                    "type": "start", "protocol": .int(PluginWire.version), "pluginID": .string(context.pluginID),
                    "configuration": PluginWire.encode(context.configuration),
                ])
        } catch {
            failure = PluginRunError(.processEnded, "the plugin process closed its connection before it started")
        }
        await withTaskCancellationHandler {
            for await item in incoming {
                switch item {
                case .closed:
                    break
                case .malformed(let why):
                    failure = failure ?? PluginRunError(.protocolViolation, "the plugin process broke the protocol: \(why)")
                    process.kill()
                case .message(let message):
                    do throws(PluginRunError) {
                        try apply(message, context: context, process: process)
                    } catch {
                        failure = failure ?? error
                        if error.kind != .failed && error.kind != .invalidConfiguration { process.kill() }
                    }
                }
            }
        } onCancel: {
            self.stop(process)
        }
        // Cancelled, the loop above ends at once; the process is still reaped before returning:
        // it ends on `stop`, or is killed when the grace period is over.
        let watchdog: Task<Void, Never>? =
            Task.isCancelled
            ? Task.detached { [clock, stopGrace] in
                do { try await clock.sleep(for: stopGrace) } catch { return }
                process.kill()
            } : nil
        let how = await exit.wait()
        watchdog?.cancel()
        let (pending, wasStopping, helloTimedOut, unresponsive) = state.withLock {
            s -> ([CheckedContinuation<Value, any Error>], Bool, Bool, Bool) in
            let p = s.running.map { Array($0.pending.values) } ?? []
            let stopping = s.running?.stopping ?? false
            let timedOut = s.running?.helloTimedOut ?? false
            let unresponsive = s.running?.unresponsive ?? false
            s.running = nil
            return (p, stopping, timedOut, unresponsive)
        }
        changed()
        for c in pending { c.resume(throwing: HomeError.driverError("plugin \(manifest.id): its process \(how) before answering")) }
        if let failure { throw failure }
        if helloTimedOut {
            throw PluginRunError(
                .noHello,
                "plugin process \(launch.pluginPath) (pid \(process.pid)) sent no hello within \(Self.seconds(helloTimeout)); killed")
        }
        if unresponsive {
            throw PluginRunError(
                .unresponsive,
                "plugin process \(launch.pluginPath) (pid \(process.pid)) did not answer a ping within \(Self.seconds(pingTimeout)); killed")
        }
        if wasStopping || Task.isCancelled { return }
        throw PluginRunError(.processEnded, "the plugin process \(how)")
    }

    /// Pings a child that answers pings every ``pingInterval`` and kills it when a ping is still
    /// unanswered ``pingTimeout`` after it went out (the reader loop then ends with the socket).
    ///
    /// Pings go out at their interval whatever the timeout (a ping answered is done with; one
    /// unanswered holds back the next until its deadline decides), so the watchdog sleeps until
    /// the nearer of the next ping and the open deadline.
    func livenessWatchdog(_ process: ChildProcess) -> Task<Void, Never> {
        Task.detached { [pingClock, pingInterval, pingTimeout] in
            var ping: Int64 = 0
            var untilPing = pingInterval
            // Time left for the unanswered ping `ping`, nil when none is open.
            var untilDeadline: Duration?
            while true {
                let step = untilDeadline.map { min($0, untilPing) } ?? untilPing
                do { try await pingClock.sleep(for: step) } catch { return }
                untilPing -= step
                untilDeadline = untilDeadline.map { $0 - step }
                let (answered, pinging) = self.state.withLock { s -> (Bool, Bool) in
                    guard let r = s.running, r.process.pid == process.pid, !r.stopping else { return (true, false) }
                    return (r.lastPong >= ping, r.answersPings)
                }
                if answered {
                    untilDeadline = nil
                } else if let left = untilDeadline, left <= .zero {
                    let hung = self.state.withLock { s -> Bool in
                        guard let r = s.running, r.process.pid == process.pid, !r.stopping, r.lastPong < ping else { return false }
                        s.running?.unresponsive = true
                        return true
                    }
                    if hung {
                        process.kill()
                        return
                    }
                    untilDeadline = nil
                }
                guard untilPing <= .zero else { continue }
                untilPing = pingInterval
                guard pinging, untilDeadline == nil else { continue }
                ping += 1
                untilDeadline = pingTimeout
                // A failed send means the child is gone: the reader loop sees that on its own.
                try? process.channel.send(["type": "ping", "id": .int(ping)])
            }
        }
    }

    /// Records a `pong` as it arrives, on the channel's reader thread: a host whose concurrency
    /// pool is busy past the deadline must not take its own delay for a hung child.
    /// - Returns: whether `message` was a well-formed pong (then it is not put in the stream).
    func recordPong(_ message: Value) -> Bool {
        guard let o = message.objectValue, o["type"]?.stringValue == "pong", let id = o["id"]?.intValue else { return false }
        state.withLock { s in
            guard let last = s.running?.lastPong else { return }
            s.running?.lastPong = max(last, id)
            s.pongs += 1
        }
        return true
    }

    /// `30 s`, `0.5 s`: a duration for a log line.
    static func seconds(_ d: Duration) -> String {
        let (s, atto) = d.components
        if atto == 0 { return "\(s) s" }
        return "\(Double(s) + Double(atto) / 1e18) s"
    }

    /// Asks the child to stop (``run(context:)`` kills it if it has not ended after ``stopGrace``).
    func stop(_ process: ChildProcess) {
        state.withLock { $0.running?.stopping = true }
        try? process.channel.send(["type": "stop"])
    }

    func apply(_ message: Value, context: any DriverContext, process: ChildProcess) throws(PluginRunError) {
        do {
            try applyMessage(message, context: context)
        } catch let error as PluginRunError {
            throw error
        } catch let error as PluginWire.FormatError {
            throw PluginRunError(.protocolViolation, "the plugin process sent a malformed message: \(error.message)")
        } catch {
            throw PluginRunError(.protocolViolation, "the plugin process sent a malformed message: \(error)")
        }
    }

    func applyMessage(_ message: Value, context: any DriverContext) throws {
        guard let o = message.objectValue, let type = o["type"]?.stringValue else {
            throw PluginWire.FormatError("a message must be an object with a \"type\"")
        }
        switch type {
        case "hello":
            let proto = o["protocol"]?.intValue ?? -1
            guard proto == PluginWire.version else {
                throw PluginRunError(
                    .incompatible, "the plugin process speaks protocol \(proto), but this hearthd speaks \(PluginWire.version)")
            }
            let m = try PluginWire.manifest(o["manifest"])
            guard m.id == manifest.id else {
                throw PluginRunError(
                    .incompatible, "the plugin process says it is '\(m.id)', but it was started as '\(manifest.id)'")
            }
            // Before anything the program publishes: its devices may carry these traits.
            let traits: [TraitDescriptor]
            do throws(PluginWire.FormatError) {
                traits = try PluginWire.vendorTraits(o["vendorTraits"])
            } catch {
                // The same hello comes again after a restart: refuse for good, not with backoff.
                throw PluginRunError(.incompatible, "the plugin's vendor traits cannot be read: \(error.message)")
            }
            if !traits.isEmpty {
                do throws(HomeError) {
                    try declareVendorTraits(traits)
                } catch {
                    throw PluginRunError(.incompatible, error.message)
                }
            }
            let watchdog = state.withLock { s -> Task<Void, Never>? in
                s.helloManifest = m
                s.running?.greeted = true
                s.running?.answersPings = o["ping"]?.boolValue == true
                return s.running?.helloWatchdog
            }
            watchdog?.cancel()
            changed()
        case "publish": context.publish(try PluginWire.device(o["device"]))
        case "remove": context.remove(device: try PluginWire.string(o, "localID", in: "remove"))
        case "report":
            guard let list = o["reports"]?.listValue else { throw PluginWire.FormatError("report.reports: expected a list") }
            var reports: [AttributeReport] = []
            for r in list { reports.append(try PluginWire.report(r)) }
            context.report(reports)
        case "emit": context.emit(try PluginWire.event(o["event"]))
        case "connectivity":
            let name = try PluginWire.string(o, "state", in: "connectivity")
            guard let s = ConnectivityState(rawValue: name) else {
                throw PluginWire.FormatError("connectivity.state: '\(name)' is not one of \(ConnectivityState.allCases.map(\.rawValue))")
            }
            context.setConnectivity(s, device: try PluginWire.optionalString(o, "localID", in: "connectivity"))
        case "log":
            let level = LogLevel(rawValue: try PluginWire.optionalString(o, "level", in: "log") ?? "info") ?? .info
            context.log(
                level, try PluginWire.string(o, "message", in: "log"), device: try PluginWire.optionalString(o, "localID", in: "log"))
        case "count":
            var by = 1
            if let value = o["by"] {
                guard let n = value.intValue, n >= 0, n <= Int64(Int32.max) else {
                    throw PluginWire.FormatError("count.by: expected a whole number from 0 to \(Int32.max)")
                }
                by = Int(n)
            }
            context.count(try PluginWire.string(o, "name", in: "count"), by: by)
        case "health": context.reportHealth(try PluginWire.health(o))
        case "traitConnectivity":
            let c = try PluginWire.traitConnectivity(o)
            context.setConnectivity(c.state, device: c.localID, trait: c.trait, deviceType: c.deviceType)
        case "result":
            guard let id = o["id"]?.intValue else { throw PluginWire.FormatError("result.id: expected an integer") }
            let c = state.withLock { $0.running?.pending.removeValue(forKey: id) }
            switch PluginWire.outcome(o) {
            case .success(let v): c?.resume(returning: v)
            case .failure(let e): c?.resume(throwing: e)
            }
        case "invalidConfiguration":
            throw PluginRunError(.invalidConfiguration, try PluginWire.string(o, "message", in: "invalidConfiguration"))
        case "failed":
            throw PluginRunError(.failed, try PluginWire.optionalString(o, "message", in: "failed") ?? "the plugin failed")
        case "stopped":
            state.withLock { $0.running?.stopping = true }
        case "pong":
            // Recorded on the reader thread (`recordPong`); only a pong without a number gets here.
            throw PluginWire.FormatError("pong.id: expected an integer")
        default:
            // Unknown messages are ignored, so a newer plugin can send more than this host knows.
            context.log(.debug, "ignored a '\(type)' message this host does not know", device: nil)
        }
    }

    public func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
        try await request { id in PluginWire.encode(command, id: id) }
    }

    public func write(_ write: DriverWrite, context: any DriverContext) async throws {
        _ = try await request { id in PluginWire.encode(write, id: id) }
    }

    func request(_ make: (Int64) -> Value) async throws -> Value {
        let (id, process): (Int64, ChildProcess?) = state.withLock { s in
            s.nextRequest += 1
            return (s.nextRequest, s.running?.process)
        }
        guard let process else {
            throw HomeError.deviceOffline("plugin \(manifest.id) is not running (its process is restarting or stopped)")
        }
        let message = make(id)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Value, any Error>) in
                let registered = state.withLock { s -> Bool in
                    guard s.running?.process.pid == process.pid else { return false }
                    s.running?.pending[id] = c
                    return true
                }
                guard registered else {
                    c.resume(throwing: HomeError.deviceOffline("plugin \(manifest.id) is not running"))
                    return
                }
                do {
                    try process.channel.send(message)
                } catch {
                    let again = state.withLock { $0.running?.pending.removeValue(forKey: id) }
                    again?.resume(throwing: HomeError.deviceOffline("plugin \(manifest.id): its process is gone"))
                }
            }
        } onCancel: {
            let c = state.withLock { $0.running?.pending.removeValue(forKey: id) }
            c?.resume(throwing: CancellationError())
        }
    }
}
