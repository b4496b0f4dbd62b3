import Foundation
import HomeModel
import PluginHost
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The host's end of a plugin socket, against a peer that stops reading (a hung child).
@Suite(.timeLimit(.minutes(1))) struct FrameChannelTests {
    /// A connected socket pair: the channel's end and the peer's descriptor.
    static func pair(sendDeadline: Duration?) throws -> (FrameChannel, Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        return (FrameChannel(fd: fds[0], sendDeadline: sendDeadline), fds[1])
    }

    @Test func aPeerThatDoesNotRead_failsTheSendAtTheDeadline_andEndsTheConnection() async throws {
        let (channel, peer) = try Self.pair(sendDeadline: .milliseconds(200))
        defer {
            channel.close()
            close(peer)
        }
        let incoming = channel.incoming()
        let chunk: Value = .string(String(repeating: "x", count: 64 << 10))
        var sent = 0
        var failure: HomeError?
        let start = ContinuousClock.now
        // The socket buffer holds a few hundred KiB; 1,000 frames of 64 KiB is far past it.
        while failure == nil && sent < 1000 {
            do {
                try channel.send(["type": "filler", "data": chunk])
                sent += 1
            } catch {
                failure = error
            }
        }
        let waited = ContinuousClock.now - start
        #expect(failure?.message.contains("has not read its connection") == true, "\(String(describing: failure))")
        #expect(sent > 0 && sent < 1000)
        #expect(waited < .seconds(5), "send held its thread for \(waited)")
        // Later sends fail at once, and the reader sees the end of the connection.
        let again = ContinuousClock.now
        #expect(throws: HomeError.self) { try channel.send(["type": "ping", "id": 1]) }
        #expect(ContinuousClock.now - again < .seconds(1))
        var ended = false
        for await item in incoming {
            if case .closed = item { ended = true }
        }
        #expect(ended)
    }

    @Test func aPeerThatReads_getsEveryFrame() async throws {
        let (channel, peer) = try Self.pair(sendDeadline: .milliseconds(200))
        defer { channel.close() }
        let reader = FrameChannel(fd: peer)
        defer { reader.close() }
        let frames = reader.incoming()
        let chunk: Value = .string(String(repeating: "y", count: 64 << 10))
        let sender = Thread {
            for i in 0..<40 { try? channel.send(["type": "filler", "n": .int(Int64(i)), "data": chunk]) }
            channel.close()
        }
        sender.start()
        var received = 0
        for await item in frames {
            if case .message(let m) = item, m.objectValue?["n"]?.intValue == Int64(received) { received += 1 }
        }
        #expect(received == 40)
    }
}
