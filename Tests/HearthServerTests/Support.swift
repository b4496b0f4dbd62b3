import DriverAPI
import Foundation
import GRDB
import HearthAPI
import HearthServer
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin's command side for tests: carries out On/Off and Door Lock commands by reporting
/// the new state back through the real core, as a driver does.
final class ReportingDriver: CommandHandler {
    let core: HomeCore
    let context: any DriverContext
    /// Commands seen, for lenient-mode tests.
    let seen = Mutex<[DriverCommand]>([])

    init(core: HomeCore, context: any DriverContext) {
        self.core = core
        self.context = context
    }

    func handle(_ command: DriverCommand) async throws -> Value {
        seen.withLock { $0.append(command) }
        switch (command.trait, command.command) {
        case (OnOffTrait.identifier, OnOffTrait.Command.on), (OnOffTrait.identifier, OnOffTrait.Command.off),
            (OnOffTrait.identifier, OnOffTrait.Command.toggle):
            let device = try? core.home(for: .system).currentDevice(id: DeviceID(plugin: "test", local: command.localID))
            let current = device?.snapshot.type(command.deviceType)?.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff]?.boolValue ?? false
            let next = command.command == OnOffTrait.Command.toggle ? !current : command.command == OnOffTrait.Command.on
            context.report([AttributeReport(localID: command.localID, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: .bool(next))])
            return .null
        default:
            throw HomeError.driverError("the test driver does not know command \(command.command.hex) of trait \(command.trait.hex)")
        }
    }

    func write(_ write: DriverWrite) async throws {
        context.report([AttributeReport(localID: write.localID, trait: write.trait, attribute: write.attribute, value: write.value)])
    }
}

/// A real core with test devices, a real SQLite access store and the real API: either a
/// real HTTP server on 127.0.0.1 with a free port (``with(strict:configuration:loginLimiter:setupLimiter:appRequestLimiter:pluginStatuses:recentLog:_:)``,
/// the end-to-end suites: WebSockets, the CLI, the Swift client), or the same router run
/// in-process on an in-memory database (``inProcess(strict:_:)``, the route suites).
struct TestHome {
    let core: HomeCore
    let access: AccessStore
    let driver: ReportingDriver
    let baseURL: URL
    let port: Int
    let directory: URL
    let server: HearthServer
    /// Set in-process: requests go through the router without a socket.
    var client: (any TestClientProtocol)? = nil

    static let lamp: DeviceID = "test:lamp"
    static let lock: DeviceID = "test:lock"
    static let contact: DeviceID = "test:door"
    static let structure: StructureID = "structure-home"
    static let livingRoom: RoomID = "room-home-living-room"

    /// Runs `body` with a fresh home and server; the server stops afterwards.
    static func with<T: Sendable>(
        strict: Bool = true, configuration: HearthServer.Configuration = .init(host: "127.0.0.1", port: 0),
        loginLimiter: (any AttemptLimiter)? = nil, setupLimiter: (any AttemptLimiter)? = nil,
        appRequestLimiter: (any AttemptLimiter)? = nil, pluginStatuses: @escaping @Sendable () -> [WirePlugin] = { [] },
        recentLog: RecentLog? = nil, exposure: ExposureSettings? = nil,
        automations: (@Sendable (HomeCore) throws -> (SceneBook, AutomationEngine))? = nil,
        hap: ((HomeCore) throws -> any HAPAdministration)? = nil, _ body: (TestHome) async throws -> T
    ) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try DatabasePool(path: directory.appendingPathComponent("hearth.sqlite").path)
        var migrator = DatabaseMigrator()
        AccessStore.registerMigrations(in: &migrator)
        try migrator.migrate(pool)
        let access = AccessStore(writer: pool, passwordRounds: 1_000)

        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let core = HomeCore(strictOperationValidation: strict, commandTimeout: .seconds(30), logger: quiet)
        let context = core.context(for: "test")
        let driver = ReportingDriver(core: core, context: context)
        core.setCommandHandler(driver, for: "test")
        publishDevices(context)

        var configuration = configuration
        configuration.port = 0
        let made = try automations?(core)
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let server = HearthServer(
            core: core, access: access, configuration: configuration, pluginStatuses: pluginStatuses, loginLimiter: loginLimiter,
            setupLimiter: setupLimiter, appRequestLimiter: appRequestLimiter, logger: quiet,
            onListening: { port in portContinuation.yield(port) }, recentLog: recentLog, exposure: exposure, scenes: made?.0,
            automations: made?.1, hap: try hap?(core))
        let task = Task { try await server.run() }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw HomeError.internal("the server did not start") }
        let home = TestHome(
            core: core, access: access, driver: driver, baseURL: URL(string: "http://127.0.0.1:\(port)")!, port: port, directory: directory,
            server: server)
        return try await body(home)
    }

    /// Runs `body` against the API in-process: the real router, the real core and the real
    /// access store on an in-memory SQLite database; no port is bound.
    static func inProcess<T: Sendable>(
        strict: Bool = true, configuration: HearthServer.Configuration = .init(host: "127.0.0.1", port: 0),
        loginLimiter: (any AttemptLimiter)? = nil, _ body: @escaping @Sendable (TestHome) async throws -> T
    ) async throws -> T {
        let access = try AccessStore.inMemory(passwordRounds: 1_000)
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let core = HomeCore(strictOperationValidation: strict, commandTimeout: .seconds(30), logger: quiet)
        let context = core.context(for: "test")
        let driver = ReportingDriver(core: core, context: context)
        core.setCommandHandler(driver, for: "test")
        publishDevices(context)
        let server = HearthServer(core: core, access: access, configuration: configuration, loginLimiter: loginLimiter, logger: quiet)
        return try await server.application().test(.router) { client in
            let home = TestHome(
                core: core, access: access, driver: driver, baseURL: URL(string: "http://in-process")!, port: 0,
                directory: FileManager.default.temporaryDirectory, server: server, client: client)
            return try await body(home)
        }
    }

    static func publishDevices(_ context: any DriverContext) {
        context.publish(
            DeviceDescription(
                localID: "lamp", name: "Lamp",
                types: [
                    DeviceTypeDescription(
                        id: OnOffLightDeviceType.identifier, isPrimary: true,
                        traits: [IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)]])
                ], commission: CommissionHint(name: "Lamp", room: "Living Room", structure: "Home")))
        context.publish(
            DeviceDescription(
                localID: "lock", name: "Front Lock",
                types: [
                    DeviceTypeDescription(
                        id: DoorLockDeviceType.identifier, isPrimary: true,
                        traits: [IdentifyTrait.identifier: [:], DoorLockTrait.identifier: [DoorLockTrait.Attribute.lockState: .int(1)]])
                ], commission: CommissionHint(name: "Front Lock", room: "Living Room", structure: "Home")))
        context.publish(
            DeviceDescription(
                localID: "door", name: "Door",
                types: [
                    DeviceTypeDescription(
                        id: ContactSensorDeviceType.identifier, isPrimary: true,
                        traits: [IdentifyTrait.identifier: [:], BooleanStateTrait.identifier: [BooleanStateTrait.Attribute.stateValue: .bool(true)]])
                ], commission: CommissionHint(name: "Door", room: "Living Room", structure: "Home")))
        context.publish(
            DeviceDescription(
                localID: "new-plug", name: "New Plug",
                types: [
                    DeviceTypeDescription(
                        id: OnOffPlugInUnitDeviceType.identifier, isPrimary: true,
                        traits: [IdentifyTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)]])
                ]))
    }

    // MARK: Principals

    /// Finishes setup: the first admin's token.
    func adminToken() throws -> String {
        guard let code = try access.bootstrap() else { throw HomeError.internal("setup already done") }
        return try access.completeSetup(code: code, password: "correct horse").token
    }

    func memberToken(_ name: String = "mia") throws -> String {
        try access.addUser(username: name, password: "member password", role: .member)
        return try access.login(username: name, password: "member password").token
    }

    /// An app token through the store's consent step, with this scope.
    func appToken(_ name: String = "Dashboard", scope: GrantScope) throws -> IssuedToken {
        let (request, secret) = try access.createAppRequest(appName: name, deviceTypes: [])
        _ = try access.approve(requestID: request.id, scope: scope, by: "user:admin")
        guard let token = try access.claimToken(requestID: request.id, secret: secret) else { throw HomeError.internal("no token") }
        return token
    }

    // MARK: HTTP

    struct Reply: Sendable {
        let status: Int
        let data: Data
        var json: Value { (try? JSONDecoder().decode(Value.self, from: data)) ?? .null }
        var errorCode: String? { json["error"]?["code"]?.stringValue }
        var text: String { String(decoding: data, as: UTF8.self) }
    }

    /// One raw HTTP request: any method, path under /api/v1, optional raw body.
    func call(_ method: String, _ path: String, token: String? = nil, body: String? = nil, bodyData: Data? = nil) async throws -> Reply {
        if let client {
            var headers = HTTPFields()
            if let token { headers[.authorization] = "Bearer \(token)" }
            let payload = bodyData ?? body.map { Data($0.utf8) }
            if payload != nil { headers[.contentType] = "application/json" }
            return try await client.execute(
                uri: "/api/v1/\(path)", method: HTTPRequest.Method(rawValue: method) ?? .get, headers: headers,
                body: payload.map { ByteBuffer(bytes: $0) }
            ) { response in
                Reply(status: Int(response.status.code), data: Data(response.body.readableBytesView))
            }
        }
        var request = URLRequest(url: URL(string: "\(baseURL.absoluteString)/api/v1/\(path)")!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body { request.httpBody = Data(body.utf8) }
        if let bodyData { request.httpBody = bodyData }
        if request.httpBody != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        let (data, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        return Reply(status: (response as? HTTPURLResponse)?.statusCode ?? 0, data: data)
    }
}

