import CMosquitto
import Foundation
import Synchronization

/// The network loop: `mosquitto_loop_forever` with the reading done in bursts.
///
/// libmosquitto's own loop waits in `pselect` before every packet (and reads one packet per
/// wait when nothing is in flight at QoS 1/2). This one polls the socket and the wake eventfd,
/// reads every packet waiting (until the socket answers EAGAIN, at most ``MQTTConnection/burst``),
/// then calls `caughtUp`, writes what is queued and runs libmosquitto's keepalive check —
/// through libmosquitto's public external-loop calls (`mosquitto_loop_read/write/misc`), so
/// the protocol, TLS and the callbacks stay libmosquitto's.
extension MQTTConnection {
    /// Errors after which `mosquitto_loop_forever` gives up instead of reconnecting (the same list).
    static let fatal: Set<Int32> = [
        MOSQ_ERR_NOMEM, MOSQ_ERR_PROTOCOL, MOSQ_ERR_INVAL, MOSQ_ERR_NOT_FOUND, MOSQ_ERR_TLS, MOSQ_ERR_PAYLOAD_SIZE,
        MOSQ_ERR_NOT_SUPPORTED, MOSQ_ERR_AUTH, MOSQ_ERR_ACL_DENIED, MOSQ_ERR_UNKNOWN, MOSQ_ERR_EAI, MOSQ_ERR_PROXY,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    /// Whether ``stop()`` or ``dropSession()`` asked the connection to end.
    var endRequested: Bool { isStopped || discardSession.withLock { $0 } }

    /// Serves the connected client until a requested disconnect (success) or an error
    /// libmosquitto's loop would not retry. A connection that drops is reconnected after a
    /// backoff delay as `mosquitto_loop_forever` does (minimum × (n + 1)², up to the maximum),
    /// the wait cut short by ``stop()``.
    func serveForever() -> Int32 {
        let success = MOSQ_ERR_SUCCESS.rawValue
        var reconnects = 0
        while true {
            var rc = serve()
            if rc == success || Self.fatal.contains(rc) { return rc }
            repeat {
                if endRequested { return success }
                let minimum = max(options.reconnectDelay.minimum, 1)
                let maximum = max(options.reconnectDelay.maximum, minimum)
                let delay = min(minimum * (reconnects + 1) * (reconnects + 1), maximum)
                if delay < maximum { reconnects += 1 }
                wake.lock()
                if !endRequested { _ = wake.wait(until: Date(timeIntervalSinceNow: Double(delay))) }
                wake.unlock()
                if endRequested { return success }
                rc = mosquitto_reconnect(handle)
            } while rc != success
            reconnects = 0
        }
    }

    /// After a libmosquitto call: nil to go on, or what ``serve()`` returns — its error, success
    /// when the socket is gone because a disconnect was asked for, else "no connection".
    func outcome(_ rc: Int32) -> Int32? {
        if rc != MOSQ_ERR_SUCCESS.rawValue { return rc }
        if mosquitto_socket(handle) >= 0 { return nil }
        return endRequested ? MOSQ_ERR_SUCCESS.rawValue : MOSQ_ERR_NO_CONN.rawValue
    }

    /// One connection: until the socket is gone (success when asked for) or an error.
    func serve() -> Int32 {
        while true {
            if let end = outcome(MOSQ_ERR_SUCCESS.rawValue) { return end }
            let socket = mosquitto_socket(handle)
            var fds = (
                pollfd(fd: socket, events: Int16(POLLIN) | (mosquitto_want_write(handle) ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
            )
            let ready = withUnsafeMutablePointer(to: &fds) { $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, 1000) } }
            if ready < 0 {
                if errno == EINTR { continue }
                return MOSQ_ERR_ERRNO.rawValue
            }
            if fds.1.revents != 0 {
                var count: UInt64 = 0
                _ = read(wakeFD, &count, 8)
            }
            if fds.0.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, let end = outcome(readBurst()) { return end }
            if fds.0.revents & Int16(POLLOUT) != 0 || mosquitto_want_write(handle), let end = outcome(mosquitto_loop_write(handle, 1)) { return end }
            if let end = outcome(mosquitto_loop_misc(handle)) { return end }
        }
    }

    /// Reads every packet waiting (libmosquitto's `packet__read` leaves EAGAIN in errno when
    /// the socket is empty), then lets the handlers hand over what they gathered.
    func readBurst() -> Int32 {
        defer { box.handlers.caughtUp() }
        for _ in 0..<Self.burst {
            errno = 0
            let rc = mosquitto_loop_read(handle, 1)
            if rc != MOSQ_ERR_SUCCESS.rawValue || mosquitto_socket(handle) < 0 { return rc }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
        }
        return MOSQ_ERR_SUCCESS.rawValue
    }
}
