public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real mosquitto broker (Debian's package) on a free loopback port, for one test.
///
/// ```swift
/// let broker = try await MosquittoBroker()                        // anonymous clients welcome
/// let locked = try await MosquittoBroker(users: ["hearth": "pw"]) // only these users
/// let secure = try await MosquittoBroker(tls: true)               // TLS; clients trust `caFile`
/// ```
///
/// The broker is killed when the value is released (or at ``stop()``).
public final class MosquittoBroker: Sendable {
    /// The loopback port it listens on.
    public let port: Int
    /// Its scratch folder: configuration, password file, certificates.
    public let directory: URL
    /// Whether it listens with TLS (a throwaway CA in ``caFile``).
    public let tls: Bool
    let process = Mutex<Process?>(nil)

    static let executable = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Starts a broker bound to 127.0.0.1 on `port` (a free one by default); returns once it
    /// accepts connections.
    ///
    /// - Parameters:
    ///   - port: the port to listen on; nil picks a free one.
    ///   - tls: listen with TLS, with a server certificate for 127.0.0.1 signed by ``caFile``.
    ///   - users: user names and passwords; empty lets anonymous clients in, else only these.
    ///   - extraConfig: more mosquitto.conf lines (a `connection` bridge to another broker).
    /// - Throws: ``BrokerError`` when mosquitto is missing or does not start.
    public init(port: Int? = nil, tls: Bool = false, users: [String: String] = [:], extraConfig: String = "") async throws {
        self.port = try port ?? Self.freeLoopbackPort()
        self.tls = tls
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-mosquitto-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // mosquitto drops to its own user when started as root: let it read the folder.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        var config = """
            listener \(self.port) 127.0.0.1
            persistence false
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            max_queued_messages 100000

            """
        if users.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            let file = directory.appendingPathComponent("passwords").path
            for (i, (name, password)) in users.sorted(by: { $0.key < $1.key }).enumerated() {
                try await Self.run("/usr/bin/mosquitto_passwd", (i == 0 ? ["-c"] : []) + ["-b", file, name, password])
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
            config += "allow_anonymous false\npassword_file \(file)\n"
        }
        if tls {
            try await makeCertificates()
            config += """
                cafile \(caFile)
                certfile \(directory.appendingPathComponent("server.pem").path)
                keyfile \(directory.appendingPathComponent("server.key").path)

                """
        }
        config += extraConfig
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        try await launch()
    }

    /// The CA certificate a client must trust when the broker listens with TLS.
    public var caFile: String { directory.appendingPathComponent("ca.pem").path }

    var configFile: URL { directory.appendingPathComponent("mosquitto.conf") }

    /// Starts the broker again on the same port (after ``stop()``); it forgets retained messages.
    public func restart() async throws {
        stop()
        try await launch()
    }

    private func launch() async throws {
        guard let executable = Self.executable else { throw BrokerError("mosquitto is not installed (scripts/setup installs it)") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = ["-c", configFile.path]
        let pipe = Pipe()
        p.standardError = pipe
        p.standardOutput = FileHandle.nullDevice
        let (lines, continuation) = AsyncStream<String>.makeStream()
        p.terminationHandler = { _ in continuation.finish() }
        try p.run()
        process.withLock { $0 = p }
        // Drain mosquitto's log until it exits.
        readLines(from: pipe, line: { continuation.yield($0) }, end: { continuation.finish() })
        var log: [String] = []
        for await line in lines {
            log.append(line)
            if line.contains("running") { return }
        }
        throw BrokerError("mosquitto did not start on port \(port):\n" + log.joined(separator: "\n"))
    }

    /// A throwaway CA and a server certificate for 127.0.0.1, made with the openssl command.
    private func makeCertificates() async throws {
        let d = directory.path
        let openssl = "/usr/bin/openssl"
        try await Self.run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=Hearth test CA",
            "-keyout", "\(d)/ca.key", "-out", "\(d)/ca.pem"])
        try await Self.run(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "\(d)/server.key", "-out", "\(d)/server.csr"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(d)/san.ext", atomically: true, encoding: .utf8)
        try await Self.run(openssl, ["x509", "-req", "-in", "\(d)/server.csr", "-CA", "\(d)/ca.pem", "-CAkey", "\(d)/ca.key",
            "-CAcreateserial", "-days", "1", "-extfile", "\(d)/san.ext", "-out", "\(d)/server.pem"])
        for f in ["ca.pem", "server.pem", "server.key"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(d)/\(f)")
        }
    }

    /// Stops the broker abruptly (SIGKILL, as a crash or power cut would) and waits for it to exit.
    ///
    /// SIGKILL because the test runner's threads block SIGTERM and a spawned child inherits
    /// that mask, so mosquitto would never see a SIGTERM.
    public func stop() {
        guard let p = process.withLock({ p in defer { p = nil }; return p }) else { return }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
    }

    /// Freezes the broker (SIGSTOP): it keeps its sockets but answers nothing, like a hung
    /// broker. ``resume()`` lets it continue; ``stop()`` works on a frozen broker too.
    public func suspend() { process.withLock { p in if let p { _ = kill(p.processIdentifier, SIGSTOP) } } }

    /// Lets a suspended broker continue (SIGCONT).
    public func resume() { process.withLock { p in if let p { _ = kill(p.processIdentifier, SIGCONT) } } }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port nothing listens on: bind 127.0.0.1:0, read the port, close.
    public static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw BrokerError("no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Publishes with the `mosquitto_pub` client, as a device on the network would.
    public func mosquittoPub(_ topic: String, _ payload: String, retain: Bool = false, qos: Int = 1, tls: Bool = false) async throws {
        var arguments = ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-q", String(qos)]
        if tls { arguments += ["--cafile", caFile] }
        if payload.isEmpty { arguments.append("-n") } else { arguments += ["-m", payload] }
        if retain { arguments.append("-r") }
        try await Self.run("/usr/bin/mosquitto_pub", arguments)
    }

    /// Runs a helper program (openssl, mosquitto_passwd, mosquitto_pub) to its end.
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

/// Why a broker could not be started or used.
public struct BrokerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
