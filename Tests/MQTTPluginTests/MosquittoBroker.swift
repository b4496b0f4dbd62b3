import Foundation
import HomeModel
import Synchronization
import Testing
@testable import MQTTPlugin

#if canImport(Glibc)
    import Glibc
#endif

/// A real mosquitto broker (Debian's package) on a free loopback port, for one test.
///
/// ```swift
/// let broker = try await MosquittoBroker.start()
/// defer { broker.stop() }
/// ```
final class MosquittoBroker: Sendable {
    let port: Int
    let directory: URL
    let process = Mutex<Process?>(nil)

    static let executable = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// TLS files when the broker listens with TLS: the CA the client must trust.
    let tls: Bool

    private init(port: Int, directory: URL, tls: Bool) {
        self.port = port
        self.directory = directory
        self.tls = tls
    }

    var caFile: String { directory.appendingPathComponent("ca.pem").path }

    /// Starts a broker bound to 127.0.0.1 on `port` (a free one by default); returns once it
    /// accepts connections.
    static func start(port: Int? = nil, tls: Bool = false) async throws -> MosquittoBroker {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-mqtt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let broker = MosquittoBroker(port: try port ?? freeLoopbackPort(), directory: directory, tls: tls)
        if tls { try await broker.makeCertificates() }
        try await broker.launch()
        return broker
    }

    /// Starts the broker again on the same port (after ``stop()``); it forgets retained messages.
    func restart() async throws {
        stop()
        try await launch()
    }

    private func launch() async throws {
        guard let executable = Self.executable else { throw BrokerError("mosquitto is not installed (scripts/setup installs it)") }
        let config = directory.appendingPathComponent("mosquitto.conf")
        try ("""
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence false
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            max_queued_messages 100000
            """ + (tls ? """

            cafile \(caFile)
            certfile \(directory.appendingPathComponent("server.pem").path)
            keyfile \(directory.appendingPathComponent("server.key").path)
            """ : "")).write(to: config, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = ["-c", config.path]
        let pipe = Pipe()
        p.standardError = pipe
        p.standardOutput = FileHandle.nullDevice
        let (lines, continuation) = AsyncStream<String>.makeStream()
        p.terminationHandler = { _ in continuation.finish() }
        try p.run()
        process.withLock { $0 = p }
        // Drain mosquitto's log on a thread of its own until it exits (EOF), with blocking reads:
        // a dispatch-source readability handler races with the pipe's teardown.
        let reader = Thread {
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
            _ = pipe
        }
        reader.start()
        var log: [String] = []
        for await line in lines {
            log.append(line)
            if line.contains("running") { return }
        }
        throw BrokerError("mosquitto did not start on port \(port):\n" + log.joined(separator: "\n"))
    }

    /// A throwaway CA and a server certificate for 127.0.0.1, made with the openssl command.
    func makeCertificates() async throws {
        let d = directory.path
        let openssl = "/usr/bin/openssl"
        try await Self.run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=Hearth test CA",
            "-keyout", "\(d)/ca.key", "-out", "\(d)/ca.pem"])
        try await Self.run(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "\(d)/server.key", "-out", "\(d)/server.csr"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(d)/san.ext", atomically: true, encoding: .utf8)
        try await Self.run(openssl, ["x509", "-req", "-in", "\(d)/server.csr", "-CA", "\(d)/ca.pem", "-CAkey", "\(d)/ca.key",
            "-CAcreateserial", "-days", "1", "-extfile", "\(d)/san.ext", "-out", "\(d)/server.pem"])
        // mosquitto drops to its own user when started as root: let it read the files.
        for f in ["ca.pem", "server.pem", "server.key"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(d)/\(f)")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: d)
    }

    /// Stops the broker abruptly (SIGKILL, as a crash or power cut would) and waits for it to exit.
    ///
    /// SIGKILL because the test runner's threads block SIGTERM and a spawned child inherits
    /// that mask, so mosquitto would never see a SIGTERM.
    func stop() {
        guard let p = process.withLock({ p in defer { p = nil }; return p }) else { return }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port nothing listens on: bind 127.0.0.1:0, read the port, close.
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw BrokerError("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Publishes with the `mosquitto_pub` client, as a device on the network would.
    func mosquittoPub(_ topic: String, _ payload: String, retain: Bool = false, qos: Int = 1, tls: Bool = false) async throws {
        var arguments = ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-q", String(qos)]
        if tls { arguments += ["--cafile", caFile] }
        if payload.isEmpty { arguments.append("-n") } else { arguments += ["-m", payload] }
        if retain { arguments.append("-r") }
        try await Self.run("/usr/bin/mosquitto_pub", arguments)
    }

    static func run(_ executable: String, _ arguments: [String]) async throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { c in
            p.terminationHandler = { c.resume(returning: $0.terminationStatus) }
            do {
                try p.run()
            } catch {
                p.terminationHandler = nil
                c.resume(throwing: error)
            }
        }
        guard status == 0 else { throw BrokerError("\(executable) \(arguments.joined(separator: " ")) exited with \(status)") }
    }
}

struct BrokerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A plain MQTT client (the plugin's own libmosquitto wrapper) playing a device: it publishes
/// state and records what it receives.
final class DeviceClient: Sendable {
    let connection: MQTTConnection
    let received: AsyncStream<(topic: String, payload: String)>
    let connected: AsyncStream<Void>

    init(port: Int, id: String = "device-\(UUID().uuidString.prefix(8))") throws {
        let (received, receivedContinuation) = AsyncStream<(topic: String, payload: String)>.makeStream()
        let (connected, connectedContinuation) = AsyncStream<Void>.makeStream()
        self.received = received
        self.connected = connected
        var handlers = MQTTConnection.Handlers()
        handlers.connected = { connectedContinuation.yield() }
        handlers.message = { topic, payload, _ in
            receivedContinuation.yield((topic, String(decoding: payload, as: UTF8.self)))
        }
        connection = try MQTTConnection(options: .init(host: "127.0.0.1", port: port, clientID: id), handlers: handlers)
    }

    /// Connects and waits for the broker's acknowledgement.
    func start() async throws {
        try connection.start()
        for await _ in connected { return }
    }

    /// Subscribes and waits until the subscription is live (a probe message comes back).
    func subscribe(_ topic: String) async throws {
        try connection.subscribe(topic, qos: 1)
        let probe = "hearth-probe-\(UUID().uuidString)"
        try connection.publish(topic, payload: probe, qos: 1)
        for await message in received where message.payload == probe { return }
    }

    /// The next message on `topic` (other topics are skipped).
    func next(on topic: String) async -> String? {
        for await message in received where message.topic == topic { return message.payload }
        return nil
    }

    func publish(_ topic: String, _ payload: String, retain: Bool = false) throws {
        try connection.publish(topic, payload: payload, qos: 1, retain: retain)
    }

    func stop() { connection.stop() }
}

/// A vendor's discovery and state messages, written from its public documentation.
struct Fixture {
    struct Item {
        let topic: String
        let payload: String
    }

    let discovery: [Item]
    let states: [Item]

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    init(_ name: String) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(name + ".json"))
        let json = try JSONParser.parse(String(decoding: data, as: UTF8.self))
        func items(_ key: String) -> [Item] {
            (json[key]?.listValue ?? []).map { item in
                let payload = item["payload"] ?? .null
                return Item(topic: item["topic"]?.stringValue ?? "", payload: payload.stringValue ?? payload.jsonText)
            }
        }
        discovery = items("discovery")
        states = items("states")
    }

    static var all: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }
}

/// Fails the test instead of hanging when `body` does not finish in time (a guard, not a wait:
/// passing tests never reach the deadline).
func within<T: Sendable>(
    _ seconds: Double = 20, _ what: String = "the expected happening", _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw BrokerError("timed out after \(seconds) s waiting for \(what)")
        }
        group.cancelAll()
        return value
    }
}
