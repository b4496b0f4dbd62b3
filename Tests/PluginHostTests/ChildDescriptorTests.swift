import DriverAPI
import DriverTesting
import Foundation
import HomeCore
import HomeModel
import PluginHost
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An isolated plugin's process gets its socket to the host and the standard streams, nothing
/// else of the host's: above all not the API's or the metrics' listening sockets.
@Suite struct ChildDescriptorTests {
    /// A TCP listener on a free loopback port, opened the way SwiftNIO opens its server sockets
    /// (`SOCK_STREAM | SOCK_NONBLOCK`, no `SOCK_CLOEXEC`), so it would survive an `exec`.
    struct InheritableListener {
        let fd: Int32
        let port: UInt16
        let inode: UInt64

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            try #require(fd >= 0)
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC == 0, "the listener must be inheritable, as NIO's are")
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(bound == 0, "bind: \(String(cString: strerror(errno)))")
            try #require(listen(fd, 16) == 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            try #require(named == 0)
            var info = stat()
            try #require(fstat(fd, &info) == 0)
            self.fd = fd
            self.port = UInt16(bigEndian: address.sin_port)
            self.inode = UInt64(info.st_ino)
        }

        /// Whether a connection to the port is accepted by the kernel (something still listens).
        func connects() -> Bool {
            let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { _ = Glibc.close(s) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
        }
    }

    /// The socket inodes a process holds open (`/proc/PID/fd/N -> socket:[INODE]`).
    func socketInodes(of pid: Int32) throws -> [Int32: UInt64] {
        let folder = "/proc/\(pid)/fd"
        var found: [Int32: UInt64] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(name)"),
                target.hasPrefix("socket:["), let fd = Int32(name)
            else { continue }
            found[fd] = UInt64(target.dropFirst("socket:[".count).dropLast())
        }
        return found
    }

    @Test func isolatedChild_holdsNoListenerOfTheHost_andCannotAcceptOnIt() async throws {
        let listener = try InheritableListener()
        let open = Atomic<Bool>(true)
        defer { if open.exchange(false, ordering: .relaxed) { _ = Glibc.close(listener.fd) } }
        #expect(try socketInodes(of: getpid()).values.contains(listener.inode))  // the check sees it here

        let core = HomeCore()
        let path = fixture("FlakyPlugin")
        let manifest = PluginManifest(id: "flaky", name: "flaky", version: "")
        let plugin = IsolatedPlugin(manifest: manifest, launch: .pluginHost(hearthd: hearthd, plugin: path, environment: childEnvironment))
        let service = PluginService(
            LoadedPlugin(path: path, manifest: manifest, plugin: plugin), core: core, configuration: section("flaky", ["failures": 0]),
            clock: ManualClock(), logger: testLogger)
        try await withServices([service]) {
            await waitForDevice(core, DeviceID(plugin: "flaky", local: "lamp")) { connectivity($0) == .online }
            let pid = try #require(service.currentStatus.processID)
            let sockets = try socketInodes(of: pid)
            #expect(!sockets.values.contains(listener.inode), "the child holds the host's listener: \(sockets)")
            // Only the host's socket pair end, on the agreed number, among what the host gave it.
            #expect(sockets[ChildLaunch.childFD] != nil)
            // (Whether the port still accepts once the host closes its copy is not checked: other
            // tests running beside this one start programs with Foundation's Process, which
            // inherit the listener too. The child's own descriptor table above is the proof.)
            #expect(listener.connects())
            if open.exchange(false, ordering: .relaxed) { _ = Glibc.close(listener.fd) }
        }
    }
}
