// Figures for the API: request throughput, WebSocket fan-out, password hashing.
// Loopback only (127.0.0.1, a free port); bounded loops; stops by itself.
// Run: swift run hearth-api-bench [devices] [requests] [sockets] [changes]
import DriverAPI
import Foundation
import GRDB
import HearthAPI
import HearthClient
import HearthServer
import HomeCore
import HomeModel
import HomeStorage
import Logging

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

@main
struct APIBench {
    static func main() async throws {
        let args = CommandLine.arguments.dropFirst().compactMap { Int($0) }
        let deviceCount = args.count > 0 ? args[0] : 200
        let requestCount = args.count > 1 ? args[1] : 400
        let socketCount = args.count > 2 ? args[2] : 20
        let changeCount = args.count > 3 ? args[3] : 200

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try DatabasePool(path: directory.appendingPathComponent("hearth.sqlite").path)
        var migrator = DatabaseMigrator()
        AccessStore.registerMigrations(in: &migrator)
        try migrator.migrate(pool)
        let access = AccessStore(writer: pool)

        var quiet = Logger(label: "bench")
        quiet.logLevel = .critical
        let core = HomeCore(logger: quiet)
        let context = core.context(for: "bench")
        for i in 0..<deviceCount {
            context.publish(
                DeviceDescription(
                    localID: "lamp-\(i)", name: "Lamp \(i)",
                    types: [
                        DeviceTypeDescription(
                            id: OnOffLightDeviceType.identifier, isPrimary: true,
                            traits: [OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)]])
                    ], commission: CommissionHint(name: "Lamp \(i)", room: "Living Room", structure: "Home")))
        }

        let clock = ContinuousClock()
        let code = try access.bootstrap()!
        var start = clock.now
        let admin = try access.completeSetup(code: code, password: "correct horse battery")
        let hashTime = clock.now - start
        print("password hash + token (PBKDF2-SHA256, 600000 rounds): \(String(format: "%.3f", seconds(hashTime))) s")

        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let server = HearthServer(core: core, access: access, configuration: .init(host: "127.0.0.1", port: 0), logger: quiet) { portContinuation.yield($0) }
        let serverTask = Task { try await server.run() }
        var portIterator = ports.makeAsyncIterator()
        let port = await portIterator.next()!
        let url = URL(string: "http://127.0.0.1:\(port)")!
        let home = Home(connection: HearthConnection(baseURL: url, token: admin.token))

        // 0. What one answer costs without the network: snapshot → wire → JSON, and back.
        let snapshots = try await core.home(for: .system).devices().list().map(\.snapshot)
        start = clock.now
        var bytes = 0
        for _ in 0..<20 {
            let wire = snapshots.map { WireDevice($0, catalog: core.catalog) }
            let data = try JSONEncoder().encode(wire)
            bytes = data.count
            _ = try JSONDecoder().decode([WireDevice].self, from: data)
        }
        let codingTime = clock.now - start
        print(
            "encode + decode \(deviceCount) devices (\(bytes / 1024) KiB): \(String(format: "%.1f", seconds(codingTime) / 20 * 1000)) ms per answer")

        // 1. GET /devices, 4 clients at a time.
        start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for _ in stride(from: worker, to: requestCount, by: 4) { _ = try await home.devices().list() }
                }
            }
            try await group.waitForAll()
        }
        let listTime = clock.now - start
        print(
            "GET /devices with \(deviceCount) devices: \(requestCount) requests in \(String(format: "%.2f", seconds(listTime))) s = "
                + "\(String(format: "%.0f", Double(requestCount) / seconds(listTime))) req/s")

        // 2. Fan-out: every subscriber follows devices (stream); the admin renames one device
        // repeatedly. First 20 subscriptions of one client (one socket carries them all), then
        // 20 clients with one subscription each (a socket each).
        let system = core.home(for: .system)
        let target = DeviceID(plugin: "bench", local: "lamp-0")
        let rename: @Sendable (String) throws -> Void = { try system.edit(.renameDevice(target, name: $0)) }
        let (oneTime, oneDelivered) = try await fanOut(
            Array(repeating: home, count: socketCount), rename: rename, changes: changeCount, final: "Final Lamp")
        print(
            "WebSocket fan-out: \(changeCount + 1) changes to \(socketCount) stream subscribers in \(String(format: "%.2f", oneTime)) s "
                + "(\(oneDelivered) messages, \(String(format: "%.0f", Double(oneDelivered) / oneTime)) msg/s)")
        let clients = (0..<socketCount).map { _ in Home(connection: HearthConnection(baseURL: url, token: admin.token)) }
        let (manyTime, manyDelivered) = try await fanOut(clients, rename: rename, changes: changeCount, final: "Final Lamp 2")
        print(
            "WebSocket fan-out, a socket per subscriber: \(changeCount + 1) changes to \(socketCount) clients in \(String(format: "%.2f", manyTime)) s "
                + "(\(manyDelivered) messages, \(String(format: "%.0f", Double(manyDelivered) / manyTime)) msg/s)")
        serverTask.cancel()
    }

    /// Subscribes each of `homes` to devices (stream), renames the device `changes` times and
    /// then to `final`, and waits until every subscriber saw `final`: seconds taken, messages delivered.
    static func fanOut(
        _ homes: [HearthClient.Home], rename: @Sendable (String) throws -> Void, changes: Int, final: String
    ) async throws -> (Double, Int) {
        let ready = AsyncStream<Void>.makeStream()
        let done = AsyncStream<Int>.makeStream()
        var watchers: [Task<Void, Never>] = []
        for home in homes {
            watchers.append(
                Task {
                    var seen = 0
                    var announced = false
                    for await change in home.devices().stream() {
                        seen += 1
                        if case .snapshot = change, !announced {
                            announced = true
                            ready.continuation.yield()
                        }
                        if case .updated(let d) = change, d.name == final { break }
                        if case .snapshot(let set, _) = change, set.contains(where: { $0.name == final }) { break }
                    }
                    done.continuation.yield(seen)
                })
        }
        var readyIterator = ready.stream.makeAsyncIterator()
        for _ in homes { _ = await readyIterator.next() }
        let clock = ContinuousClock()
        let start = clock.now
        for i in 0..<changes { try rename(i % 2 == 0 ? "Lamp A" : "Lamp B") }
        try rename(final)
        var doneIterator = done.stream.makeAsyncIterator()
        var delivered = 0
        for _ in homes { delivered += await doneIterator.next() ?? 0 }
        let time = seconds(clock.now - start)
        for w in watchers { w.cancel() }
        return (time, delivered)
    }
}
