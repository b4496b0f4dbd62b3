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
    /// How long ``send(_:)`` may wait for a peer that does not read (nil: as long as it takes).
    public let sendDeadline: Duration?
    let writeLock = Mutex(())
    let closed = Mutex(false)

    /// Wraps a connected stream socket. The channel owns the descriptor and closes it in ``close()``.
    ///
    /// With a `sendDeadline` (the host's end: a hung child stops reading, its socket buffer fills,
    /// and a plain `send` would hold the calling thread — one of the concurrency pool's few — for
    /// good), a frame that cannot be written within it shuts the connection down: the reader
    /// sees the end, and the child is reaped, killed after its grace period if it lingers.
    public init(fd: Int32, sendDeadline: Duration? = nil) {
        self.fd = fd
        self.sendDeadline = sendDeadline
    }

    /// Sends one message as a frame.
    ///
    /// - Throws: ``HomeError`` `internal` when the peer is gone, or has not read for ``sendDeadline``.
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
        let deadline = sendDeadline.map { ContinuousClock.now.advanced(by: $0) }
        let result: SendResult = writeLock.withLock { _ in
            frame.withUnsafeBytes { raw -> SendResult in
                var offset = 0
                // MSG_NOSIGNAL: a dead peer must give EPIPE, not a SIGPIPE that kills the process.
                let flags = Int32(MSG_NOSIGNAL) | (deadline == nil ? 0 : Int32(MSG_DONTWAIT))
                while offset < raw.count {
                    let w = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, flags)
                    if w >= 0 {
                        offset += w
                        continue
                    }
                    if errno == EINTR { continue }
                    guard let deadline, errno == EAGAIN || errno == EWOULDBLOCK else { return .closed }
                    let left = ContinuousClock.now.duration(to: deadline)
                    guard left > .zero else { return .stalled }
                    var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    let ms = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
                    _ = poll(&pfd, 1, ms)
                }
                return .sent
            }
        }
        switch result {
        case .sent: return
        case .closed: throw .internal("the plugin connection is closed")
        case .stalled:
            // Half a frame may be out: the stream is unusable. Ending it wakes the reader.
            shutdown(fd, Int32(SHUT_RDWR))
            throw .internal("the peer has not read its connection for \(sendDeadline!); closed")
        }
    }

    enum SendResult { case sent, closed, stalled }

    /// Starts the reader thread and returns what it reads; the stream finishes at end of file.
    ///
    /// Call once. `afterEnd` runs on the reader thread after the last read, before the stream
    /// finishes (the host uses it to reap the child process without blocking the pool).
    /// `consume` sees each message first, on the reader thread; one it returns true for is not
    /// put in the stream (the host records liveness pongs there, the moment they arrive, even
    /// while the pool is busy).
    public func incoming(
        consume: (@Sendable (Value) -> Bool)? = nil, afterEnd: (@Sendable () -> String?)? = nil
    ) -> AsyncStream<Incoming> {
        let (stream, continuation) = AsyncStream<Incoming>.makeStream()
        let fd = self.fd
        let thread = Thread {
            while true {
                switch Self.readFrame(fd) {
                case .frame(let data):
                    do {
                        let value = try JSONDecoder().decode(Value.self, from: data)
                        if consume?(value) != true { continuation.yield(.message(value)) }
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
