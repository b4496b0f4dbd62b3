import DriverAPI
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// The MQTT plugin's `hearth doctor` check: can the broker be reached, and does it accept the
/// configured credentials? A plain TCP connection and one MQTT 3.1.1 CONNECT (libmosquitto's
/// loop is not needed for one question), each step with a 5 s time limit.
enum BrokerProbe {
    /// The check for `host`:`port`; `tls` when the plugin speaks TLS (then only reachability).
    static func check(host: String, port: Int, username: String?, password: String?, tls: Bool) -> DoctorFinding {
        check(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)", username: username, password: password, tls: tls)
    }

    /// Connects and, unless `tls` (doctor speaks no TLS), sends an MQTT CONNECT with the credentials.
    static func check(_ address: String, username: String?, password: String?, tls: Bool = false) -> DoctorFinding {
        let check = "mqtt broker"
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]), (1...65535).contains(port) else {
            return DoctorFinding(check: check, status: .problem, explanation: "'\(address)' is not host:port (for example 127.0.0.1:1883)")
        }
        let host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let fd: Int32
        switch connect(host: host, port: port) {
        case .success(let s): fd = s
        case .failure(let why):
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "cannot reach the broker at \(address): \(why.reason). Is mosquitto running ('systemctl status mosquitto') and listening there?")
        }
        defer { close(fd) }
        if tls {
            return DoctorFinding(
                check: check, status: .ok,
                explanation: "\(address) is reachable (it is configured for TLS: doctor does not check the TLS handshake or the credentials)")
        }
        let packet = connectPacket(clientID: "hearth-doctor-\(getpid())", username: username, password: password)
        guard packet.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == packet.count else {
            return DoctorFinding(check: check, status: .problem, explanation: "the broker at \(address) closed the connection at once")
        }
        var reply = [UInt8](repeating: 0, count: 4)
        var got = 0
        while got < 4 {
            let n = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, 4 - got, 0) }
            if n <= 0 { break }
            got += n
        }
        guard got == 4, reply[0] == 0x20 else {
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "something listens at \(address) but does not answer as an MQTT broker (or needs TLS)")
        }
        switch reply[3] {
        case 0:
            return DoctorFinding(check: check, status: .ok, explanation: "\(address) accepted the connection" + (username.map { " as \($0)" } ?? ""))
        case 4:
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "the broker at \(address) refused the user name or password"
                    + (username == nil ? " (none was given: set mqtt.broker.username/password in hearth.yaml, or pass --broker-username/--broker-password)" : "")
                    + ". Check mqtt.broker.username/password in hearth.yaml against the broker's password file")
        case 5:
            return DoctorFinding(
                check: check, status: .problem,
                explanation: "the broker at \(address) says this client is not authorized"
                    + (username == nil ? ": it does not allow anonymous clients, set mqtt.broker.username/password in hearth.yaml" : ""))
        default:
            return DoctorFinding(check: check, status: .problem, explanation: "the broker at \(address) refused the connection (code \(reply[3]))")
        }
    }

    static func connectPacket(clientID: String, username: String?, password: String?) -> [UInt8] {
        func string(_ s: String) -> [UInt8] {
            let b = Array(s.utf8)
            return [UInt8(b.count >> 8), UInt8(b.count & 0xFF)] + b
        }
        var flags: UInt8 = 0x02
        if username != nil { flags |= 0x80 }
        if password != nil { flags |= 0x40 }
        var body = string("MQTT") + [4, flags, 0, 30] + string(clientID)
        if let username { body += string(username) }
        if let password { body += string(password) }
        var length: [UInt8] = []
        var n = body.count
        repeat {
            var byte = UInt8(n % 128)
            n /= 128
            if n > 0 { byte |= 0x80 }
            length.append(byte)
        } while n > 0
        return [0x10] + length + body
    }

    struct ConnectFailure: Error {
        let reason: String
    }

    static func connect(host: String, port: Int) -> Result<Int32, ConnectFailure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else { return .failure(ConnectFailure(reason: "cannot resolve '\(host)' (\(String(cString: gai_strerror(rc))))")) }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let ai = entry {
            let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), ai.pointee.ai_protocol)
            if fd >= 0 {
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 { return .success(fd) }
                lastError = String(cString: strerror(errno))
                close(fd)
            }
            entry = ai.pointee.ai_next
        }
        return .failure(ConnectFailure(reason: lastError.lowercased()))
    }
}
