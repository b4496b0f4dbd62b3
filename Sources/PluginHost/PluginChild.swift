import DriverAPI
import HomeModel
import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// The child side of isolated mode: `hearthd plugin-host --plugin PATH --fd N` loads one plugin
/// `.so` and serves it over the socket on descriptor `N` (`docs/plugin-protocol.md`).
///
/// A crash here (`fatalError`, a segfault) ends this process only; the host sees the socket
/// close, reaps the process and restarts it with backoff. When the host goes away the socket
/// closes too: the plugin is cancelled and this process ends.
public enum PluginChild {
    /// Exit statuses of the plugin-host role.
    public enum Status {
        /// Stopped on request, or the host went away.
        public static let stopped: Int32 = 0
        /// The plugin's `run` threw.
        public static let failed: Int32 = 1
        /// The `.so` could not be loaded, or the host broke the protocol.
        public static let unusable: Int32 = 2
        /// The plugin refused its configuration (`EX_CONFIG`).
        public static let invalidConfiguration: Int32 = 78
    }

    /// Serves the plugin at `path` on descriptor `fd` until the host says `stop` or goes away.
    ///
    /// - Returns: the exit status for the process (``Status``).
    public static func serve(pluginPath path: String, fd: Int32) async -> Int32 {
        let channel = FrameChannel(fd: fd)
        defer { channel.close() }
        func fail(_ message: String) -> Int32 {
            FileHandle.standardError.write(Data("hearthd plugin-host: \(path): \(message)\n".utf8))
            try? channel.send(["type": "failed", "message": .string(message)])
            return Status.unusable
        }
        let loaded: LoadedPlugin
        do throws(PluginLoadError) {
            loaded = try PluginLoader.load(path)
        } catch {
            return fail(error.message)
        }
        let plugin = loaded.plugin
        do {
            try channel.send(
                ["type": "hello", "protocol": .int(PluginWire.version), "manifest": PluginWire.encode(loaded.manifest), "ping": true])
        } catch {
            return fail("the host closed the connection")
        }
        var messages = channel.incoming().makeAsyncIterator()

        // The host's first message: `start`, with the configuration.
        guard case .message(let first) = await messages.next(), let start = first.objectValue,
            start["type"]?.stringValue == "start"
        else { return fail("the host did not send 'start'") }
        guard start["protocol"]?.intValue == PluginWire.version else {
            return fail("the host speaks protocol \(start["protocol"] ?? .null), this plugin-host speaks \(PluginWire.version)")
        }
        let configuration: PluginConfiguration
        do {
            configuration = try PluginWire.configuration(start["configuration"])
        } catch {
            return fail("'start' is malformed: \(error)")
        }
        let pluginID = start["pluginID"]?.stringValue ?? loaded.manifest.id
        do {
            try plugin.checkConfiguration(configuration)
        } catch {
            let message = (error as? HomeError)?.message ?? "\(error)"
            try? channel.send(["type": "invalidConfiguration", "message": .string(message)])
            return Status.invalidConfiguration
        }
        let context = ChannelContext(pluginID: pluginID, configuration: configuration, channel: channel)

        enum Ended: Sendable {
            case run(Result<Void, any Error>)
            case host
        }
        // Hand the iterator over to the message loop task.
        let loop = MessageLoop(iterator: messages)
        return await withTaskGroup(of: Ended.self) { group -> Int32 in
            group.addTask {
                do {
                    try await plugin.run(context: context)
                    return .run(.success(()))
                } catch {
                    return .run(.failure(error))
                }
            }
            group.addTask {
                await loop.serve(plugin: plugin, context: context, channel: channel)
                return .host
            }
            let first = await group.next()!
            group.cancelAll()
            let runResult: Result<Void, any Error>
            switch first {
            case .run(let r):
                runResult = r
            case .host:
                guard case .run(let r) = await group.next()! else { return Status.stopped }
                runResult = r
            }
            switch runResult {
            case .failure(let error) where !(error is CancellationError):
                let message = (error as? HomeError)?.message ?? "\(error)"
                try? channel.send(["type": "failed", "message": .string(message)])
                return Status.failed
            default:
                try? channel.send(["type": "stopped"])
                return Status.stopped
            }
        }
    }
}

/// Reads the host's requests after `start`: commands and writes (each answered by a `result`),
/// liveness pings (answered by a `pong`), and `stop`. Returns on `stop`, when the host goes away, or when cancelled.
///
/// `@unchecked Sendable`: the iterator is used by exactly one task, `serve`, after the hand-over.
final class MessageLoop: @unchecked Sendable {
    var iterator: AsyncStream<FrameChannel.Incoming>.AsyncIterator

    init(iterator: AsyncStream<FrameChannel.Incoming>.AsyncIterator) { self.iterator = iterator }

    func serve(plugin: any DriverPlugin, context: any DriverContext, channel: FrameChannel) async {
        await withTaskGroup(of: Void.self) { requests in
            while let item = await iterator.next() {
                guard case .message(let message) = item, let o = message.objectValue else { return }
                switch o["type"]?.stringValue {
                case "stop":
                    return
                case "ping":
                    // Answered by this loop, on the same threads the plugin's tasks use: a plugin
                    // that blocks them all leaves the ping unanswered, and the host restarts it.
                    try? channel.send(["type": "pong", "id": o["id"] ?? .null])
                case "command", "write":
                    let id = o["id"]?.intValue ?? -1
                    requests.addTask {
                        let outcome: Result<Value, any Error>
                        do {
                            if o["type"]?.stringValue == "command" {
                                outcome = .success(try await plugin.handle(try PluginWire.command(o), context: context))
                            } else {
                                try await plugin.write(try PluginWire.write(o), context: context)
                                outcome = .success(.null)
                            }
                        } catch let error as PluginWire.FormatError {
                            outcome = .failure(HomeError.invalidArgument(error.message))
                        } catch {
                            outcome = .failure(error)
                        }
                        try? channel.send(PluginWire.result(id: id, outcome))
                    }
                default:
                    continue  // Unknown requests are ignored, so a newer host can send more.
                }
            }
        }
    }
}

/// The ``DriverContext`` inside the child: every call becomes one message to the host.
struct ChannelContext: DriverContext {
    let pluginID: String
    let configuration: PluginConfiguration
    let channel: FrameChannel

    func publish(_ device: DeviceDescription) { send(["type": "publish", "device": PluginWire.encode(device)]) }
    func remove(device localID: String) { send(["type": "remove", "localID": .string(localID)]) }
    func report(_ reports: [AttributeReport]) { send(["type": "report", "reports": .list(reports.map(PluginWire.encode))]) }
    func emit(_ event: EventReport) { send(["type": "emit", "event": PluginWire.encode(event)]) }
    func setConnectivity(_ state: ConnectivityState, device localID: String?) {
        send(["type": "connectivity", "state": .string(state.rawValue), "localID": localID.map(Value.string) ?? .null])
    }
    func setConnectivity(_ state: ConnectivityState, device localID: String, trait: TraitID, deviceType: DeviceTypeID?) {
        send(PluginWire.encodeTraitConnectivity(state, device: localID, trait: trait, deviceType: deviceType))
    }
    func log(_ level: LogLevel, _ message: String, device localID: String?) {
        send(["type": "log", "level": .string(level.rawValue), "message": .string(message), "localID": localID.map(Value.string) ?? .null])
    }
    func count(_ name: String, by amount: Int) { send(["type": "count", "name": .string(name), "by": .int(Int64(amount))]) }
    func reportHealth(_ health: PluginHealth) { send(PluginWire.encode(health)) }

    /// A lost host is not the plugin's problem: the process ends when the host's `stop` or its
    /// death (PR_SET_PDEATHSIG) arrives, so a failed send is dropped.
    func send(_ message: Value) { try? channel.send(message) }
}
