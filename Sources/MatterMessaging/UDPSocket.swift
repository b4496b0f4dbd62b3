#if canImport(Glibc)
import Glibc
#endif

/// A UDP socket bound to all addresses: IPv6 with IPv4-mapped addresses (dual-stack) where the
/// kernel has IPv6, IPv4 otherwise. Non-blocking reads after `poll`.
final class UDPSocket: @unchecked Sendable {
    // @unchecked: the descriptor is fixed at init; send and receive are system calls that are
    // safe to make from several threads; `close` happens once, from the owner.
    let fd: Int32
    let isIPv6: Bool
    let port: UInt16

    init(port: UInt16) throws(MessagingError) {
        var fd = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
        var v6 = true
        if fd < 0 {
            fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            v6 = false
        }
        guard fd >= 0 else { throw MessagingError(.transport, "socket() failed: errno \(errno)") }
        var zero: Int32 = 0
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var rc: Int32
        if v6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = port.bigEndian
            addr.sin6_addr = in6addr_any
            rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard rc == 0 else {
            let e = errno
            _ = Glibc.close(fd)
            throw MessagingError(.transport, "bind to UDP port \(port) failed: errno \(e)")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Self.address(of: storage).port
        self.fd = fd
        isIPv6 = v6
    }

    func close() { _ = Glibc.close(fd) }

    /// Sends one datagram; errors (an unreachable peer) are reported, not thrown.
    @discardableResult
    func send(_ bytes: [UInt8], to peer: PeerAddress) -> Bool {
        var storage = sockaddr_storage()
        var length: socklen_t
        var a6 = in6_addr()
        var a4 = in_addr()
        if inet_pton(AF_INET6, peer.host, &a6) == 1 || (isIPv6 && inet_pton(AF_INET6, "::ffff:" + peer.host, &a6) == 1) {
            guard isIPv6 else { return false }
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = peer.port.bigEndian
            addr.sin6_addr = a6
            withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee = addr } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else if inet_pton(AF_INET, peer.host, &a4) == 1 {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = peer.port.bigEndian
            addr.sin_addr = a4
            withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee = addr } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else {
            return false
        }
        let sent = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, b.baseAddress, b.count, 0, $0, length) }
            }
        }
        return sent == bytes.count
    }

    /// Waits up to `timeoutMilliseconds` for datagrams, then reads every one that is there.
    func receive(timeoutMilliseconds: Int32) -> [([UInt8], PeerAddress)] {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, timeoutMilliseconds) > 0 else { return [] }
        var out: [([UInt8], PeerAddress)] = []
        var buffer = [UInt8](repeating: 0, count: 1500)
        for _ in 0..<256 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let n = buffer.withUnsafeMutableBytes { b in
                withUnsafeMutablePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT), $0, &length)
                    }
                }
            }
            guard n > 0 else { break }
            out.append((Array(buffer.prefix(n)), Self.address(of: storage)))
        }
        return out
    }

    /// An IP literal and port; IPv4-mapped IPv6 addresses are shown as IPv4.
    static func address(of storage: sockaddr_storage) -> PeerAddress {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if storage.ss_family == sa_family_t(AF_INET6) {
            let a = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee } }
            var addr = a.sin6_addr
            inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
            var host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if host.hasPrefix("::ffff:") && host.contains(".") { host.removeFirst(7) }
            return PeerAddress(host: host, port: UInt16(bigEndian: a.sin6_port))
        }
        let a = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee } }
        var addr = a.sin_addr
        inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
        return PeerAddress(host: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                           port: UInt16(bigEndian: a.sin_port))
    }
}
