import Foundation
import HearthServer
import Logging
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client over loopback for tests that need what no HTTP client does: sockets
/// that send nothing or half a request, and a chosen source address.
final class RawSocket: Sendable {
    let fd: Int32

    /// Connects to `127.0.0.1:port` from `source` (another loopback address: 127.0.0.2 …).
    init(port: Int, source: String? = nil, receiveTimeout: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                throw POSIXError(.EADDRNOTAVAIL)
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until the server closes (`closed`), the receive timeout passes (not closed), or
    /// `until` is in what was read.
    func read(until marker: String? = nil) -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<1_000 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if n < 0 { return (String(decoding: received, as: UTF8.self), errno == ECONNRESET) }
            received += buffer.prefix(n)
            let text = String(decoding: received, as: UTF8.self)
            if let marker, text.contains(marker) { return (text, false) }
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    /// The status code of the response read (0: none).
    static func status(_ response: String) -> Int {
        response.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    }
}

/// Runs blocking socket work on a dispatch thread, so it holds none of the cooperative threads
/// the server needs to answer.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    let result: Result<T, any Error> = await withCheckedContinuation { continuation in
        // A serial queue of its own: a thread outside the global pool, which a blocking read
        // would otherwise hold until the pool's monitor (once a second) adds another.
        DispatchQueue(label: "test.blocking").async { continuation.resume(returning: Result { try work() }) }
    }
    return try result.get()
}

/// Log messages collected by a ``CollectingLogHandler``.
final class LogLines: Sendable {
    let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
}

/// Collects log messages, for tests of what the server logs.
struct CollectingLogHandler: LogHandler {
    let sink: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { sink.lines.withLock { $0.append("\(event.message)") } }
}

/// Idle clients cannot use up hearthd's descriptors: a connection that sends nothing or half a
/// head is closed after the header timeout, a kept-alive one after the idle timeout, and a
/// listener holds at most `maxConnections` (the rest wait) — over real sockets on loopback.
@Suite struct ConnectionLimitTests {
    static let get = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    @Test func idle_and_half_sent_connections_are_closed_and_the_api_still_answers() async throws {
        let limits = ConnectionLimits(headerTimeout: .milliseconds(500), idleTimeout: .seconds(1), maxConnections: 6)
        try await TestHome.with(configuration: .init(host: "127.0.0.1", port: 0, connections: limits)) { home in
            let port = home.port
            let closed = try await blocking {
                // Fill the cap: 4 that send nothing, 2 with half a head.
                let idle = try (0..<6).map { i in
                    let s = try RawSocket(port: port, receiveTimeout: 8)
                    if i >= 4 { s.send("GET /healthz HTTP/1.1\r\nHost: 127.") }
                    return s
                }
                // A real request still gets its answer (once the idle ones are gone).
                let client = try RawSocket(port: port)
                client.send(Self.get)
                let answer = client.read(until: "\"ok\"")
                #expect(RawSocket.status(answer.text) == 200, "\(answer.text)")
                // Every idle socket was closed by the server.
                return idle.map { $0.read().closed }
            }
            #expect(closed == Array(repeating: true, count: 6))
        }
    }

    @Test func a_kept_alive_connection_is_closed_after_the_idle_timeout() async throws {
        // 2 s: long enough that a loaded 2-core machine answers the first request before it (it
        // failed at 700 ms under a parallel run), short enough for the 20 s read to see the close.
        let limits = ConnectionLimits(headerTimeout: .seconds(30), idleTimeout: .seconds(2), maxConnections: 16)
        try await TestHome.with(configuration: .init(host: "127.0.0.1", port: 0, connections: limits)) { home in
            let port = home.port
            let (status, closed) = try await blocking {
                let s = try RawSocket(port: port, receiveTimeout: 20)
                s.send(Self.get)
                let first = s.read(until: "\"ok\"")
                // Half of a second request does not keep it open.
                s.send("GET /healthz HTTP/1.1\r\n")
                return (RawSocket.status(first.text), s.read().closed)
            }
            #expect(status == 200)
            #expect(closed)
        }
    }

    @Test func the_metrics_listener_logs_its_cap_and_answers_once_idle_ones_are_closed() async throws {
        let messages = LogLines()
        let logger = Logger(label: "test.metrics") { _ in CollectingLogHandler(sink: messages) }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let server = MetricsServer(
            host: "127.0.0.1", port: 0, limits: ConnectionLimits(headerTimeout: .milliseconds(500), idleTimeout: .seconds(1), maxConnections: 3),
            logger: logger, onListening: { continuation.yield($0) }, render: { Array("hearth_up 1\n".utf8) })
        let task = Task { try await server.run() }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let (answer, closed) = try await blocking {
            let idle = try (0..<3).map { _ in try RawSocket(port: port, receiveTimeout: 8) }
            let client = try RawSocket(port: port)
            client.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            return (client.read(until: "hearth_up 1").text, idle.map { $0.read().closed })
        }
        #expect(RawSocket.status(answer) == 200, "\(answer)")
        #expect(answer.contains("hearth_up 1"))
        #expect(closed == [true, true, true])
        #expect(messages.all.contains { $0.contains("connection limit reached") && $0.contains("server.maxConnections") })
    }
}
