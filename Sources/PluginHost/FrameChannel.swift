public import HomeModel
import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// One end of the plugin protocol's socket: length-prefixed JSON frames (see
/// `docs/plugin-protocol.md`).
///
/// Sending is synchronous and thread-safe (a lock keeps frames whole). Receiving runs on a
/// dedicated thread — never on the cooperative pool, whose few threads must not block in
/// `read` — and is handed over as an `AsyncStream`.
///
/// `@unchecked Sendable`: the file descriptor is immutable after `init`, writes are serialised
/// by `writeLock`, and `closed` is a `Mutex`; the reader thread owns all reads.
public final class FrameChannel: @unchecked Sendable {
    /// What the reader thread saw.
    public enum Incoming: Sendable {
        case message(Value)
        /// The peer sent something that is not a frame of JSON; the channel stops reading.
        case malformed(String)
        /// The peer closed the connection: the last element. Carries what `afterEnd` said.
        case closed(String?)
    }

    /// Largest frame accepted (16 MiB): a length beyond it means the peer is not speaking the protocol.
    public static let maximumFrameLength = 16 << 20

    public let fd: Int32
    let writeLock = Mutex(())
    let closed = Mutex(false)

    /// Wraps a connected stream socket. The channel owns the descriptor and closes it in ``close()``.
    public init(fd: Int32) { self.fd = fd }

    /// Sends one message as a frame.
    ///
    /// - Throws: ``HomeError`` `internal` when the peer is gone.
    public func send(_ message: Value) throws(HomeError) {
        let body: Data
        do {
            body = try JSONEncoder().encode(message)
        } catch {
            throw .internal("cannot encode a protocol message: \(error)")
        }
        var frame = Data(capacity: body.count + 4)
        let n = UInt32(body.count)
        frame.append(contentsOf: [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)])
        frame.append(body)
        let ok: Bool = writeLock.withLock { _ in
            frame.withUnsafeBytes { raw -> Bool in
                var offset = 0
                while offset < raw.count {
                    // MSG_NOSIGNAL: a dead peer must give EPIPE, not a SIGPIPE that kills the process.
                    let w = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if w < 0 {
                        if errno == EINTR { continue }
                        return false
                    }
                    offset += w
                }
                return true
            }
        }
        if !ok { throw .internal("the plugin connection is closed") }
    }

    /// Starts the reader thread and returns what it reads; the stream finishes at end of file.
    ///
    /// Call once. `afterEnd` runs on the reader thread after the last read, before the stream
    /// finishes (the host uses it to reap the child process without blocking the pool).
    public func incoming(afterEnd: (@Sendable () -> String?)? = nil) -> AsyncStream<Incoming> {
        let (stream, continuation) = AsyncStream<Incoming>.makeStream()
        let fd = self.fd
        let thread = Thread {
            while true {
                switch Self.readFrame(fd) {
                case .frame(let data):
                    do {
                        let value = try JSONDecoder().decode(Value.self, from: data)
                        continuation.yield(.message(value))
                    } catch {
                        continuation.yield(.malformed("a frame is not JSON: \(error)"))
                        shutdown(fd, Int32(SHUT_RD))
                    }
                    continue
                case .malformed(let why):
                    continuation.yield(.malformed(why))
                case .end:
                    break
                }
                break
            }
            continuation.yield(.closed(afterEnd?()))
            continuation.finish()
        }
        thread.name = "hearth-plugin-reader"
        thread.start()
        return stream
    }

    /// Closes the descriptor (once).
    public func close() {
        let first = closed.withLock { c -> Bool in
            defer { c = true }
            return !c
        }
        if first { _ = Glibc.close(fd) }
    }

    enum Read { case frame(Data), malformed(String), end }

    static func readFrame(_ fd: Int32) -> Read {
        var header = [UInt8](repeating: 0, count: 4)
        switch readExactly(fd, &header, 4) {
        case .end: return .end
        case .partial: return .malformed("the connection ended inside a frame header")
        case .ok: break
        }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard length <= maximumFrameLength else {
            return .malformed("a frame claims \(length) bytes (more than \(maximumFrameLength)); not the Hearth plugin protocol")
        }
        var body = [UInt8](repeating: 0, count: length)
        switch readExactly(fd, &body, length) {
        case .ok: return .frame(Data(body))
        case .end, .partial: return .malformed("the connection ended inside a frame of \(length) bytes")
        }
    }

    enum ReadResult { case ok, end, partial }

    static func readExactly(_ fd: Int32, _ buffer: inout [UInt8], _ count: Int) -> ReadResult {
        var got = 0
        while got < count {
            let r = buffer.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress! + got, count - got) }
            if r < 0 {
                if errno == EINTR { continue }
                return got == 0 ? .end : .partial
            }
            if r == 0 { return got == 0 ? .end : .partial }
            got += r
        }
        return .ok
    }
}
