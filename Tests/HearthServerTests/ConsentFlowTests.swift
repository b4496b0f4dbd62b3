import Foundation
import HearthAPI
import HearthClient
import HomeModel
import HomeStorage
import Synchronization
import Testing

/// The consent step end to end: an app asks with `HearthClient`'s `Home.connect`, an admin
/// approves with the real `hearth` CLI (a child process), the app gets a scoped token, restores
/// it, and disconnecting revokes it.
@Suite struct ConsentFlowTests {
    @Test func appConnects_adminApprovesWithTheCLI_appSeesItsScope_disconnectRevokes() async throws {
        try await TestHome.with { home in
            let cli = try CLI(home: home)
            guard let code = try home.access.bootstrap() else { throw CLIError("no setup code") }
            let setup = try await cli.run(["setup", "--url", home.baseURL.absoluteString, "--code", code, "--password-stdin"], stdin: "correct horse\n")
            #expect(setup.status == 0, "\(setup.output)")

            let store = FileSessionStore(path: cli.directory.appendingPathComponent("dashboard.json").path)
            let (pending, pendingContinuation) = AsyncStream<HearthClient.Home.PendingConsent>.makeStream()
            async let connected = HearthClient.Home.connect(
                url: home.baseURL, appName: "Dashboard", deviceTypes: [OnOffLightDeviceType.identifier], store: store
            ) { p in pendingContinuation.yield(p) }

            var requests = pending.makeAsyncIterator()
            let request = try #require(await requests.next())
            let listed = try await cli.run(["grants", "pending", "--json"])
            #expect(listed.status == 0, "\(listed.output)")
            #expect(listed.output.contains(request.requestID))
            let table = try await cli.run(["grants", "pending"])
            #expect(table.output.contains("Dashboard") && table.output.contains("On/Off Light"), "\(table.output)")

            let approve = try await cli.run(["grants", "approve", request.requestID])
            #expect(approve.status == 0, "\(approve.output)")

            let app = try await connected
            #expect(try await app.devices().list().map(\.id) == ["test:lamp"])
            #expect(try await app.me().principal == "app:Dashboard")

            let restored = try #require(try await HearthClient.Home.restoreSession(store: store))
            #expect(try await restored.devices().list().count == 1)

            let grants = try await cli.run(["grants", "--json"])
            #expect(grants.output.contains("Dashboard"))

            let credentials = try #require(try store.load())
            try await app.disconnect()
            #expect(try store.load() == nil)
            try store.save(credentials)
            #expect(try await HearthClient.Home.restoreSession(store: store) == nil, "a revoked token restores nothing")
            #expect(try store.load() == nil, "and is forgotten")
        }
    }

    @Test func deniedRequest_failsTheConnect_withPermissionDenied() async throws {
        try await TestHome.with { home in
            let cli = try CLI(home: home)
            let admin = try home.adminToken()
            try cli.signIn(home: home, token: admin)
            let (pending, pendingContinuation) = AsyncStream<HearthClient.Home.PendingConsent>.makeStream()
            async let connected = HearthClient.Home.connect(url: home.baseURL, appName: "Snoop") { p in pendingContinuation.yield(p) }
            var requests = pending.makeAsyncIterator()
            let request = try #require(await requests.next())
            #expect(try await cli.run(["grants", "deny", request.requestID]).status == 0)
            do {
                _ = try await connected
                Issue.record("a denied app must not connect")
            } catch {
                #expect((error as? HomeError)?.code == .permissionDenied)
            }
        }
    }

    @Test func cli_listsDevicesAsATable_andAsJSON_andReportsErrors() async throws {
        try await TestHome.with { home in
            let cli = try CLI(home: home)
            _ = try home.memberToken()
            let login = try await cli.run(
                ["login", "--url", home.baseURL.absoluteString, "--username", "mia", "--password-stdin"], stdin: "member password\n")
            #expect(login.status == 0, "\(login.output)")
            #expect(login.output.contains("user:mia"))
            let table = try await cli.run(["devices"])
            #expect(table.status == 0, "\(table.output)")
            #expect(table.output.contains("ID") && table.output.contains("Living Room") && table.output.contains("On/Off Light"), "\(table.output)")
            // Tables print human units; --json keeps the specification's.
            #expect(table.output.contains("Power Off") && table.output.contains("Contact Closed") && table.output.contains("Lock Locked"), "\(table.output)")
            #expect(!table.output.contains("onOff="), "\(table.output)")
            let json = try await cli.run(["devices", "--json"])
            let ids = try JSONDecoder().decode(Value.self, from: Data(json.output.utf8)).listValue?.compactMap { $0["id"]?.stringValue }
            #expect(ids == ["test:door", "test:lamp", "test:lock"])

            let refused = try await cli.run(["rooms", "add", "Attic", "--structure", "structure-home"])
            #expect(refused.status != 0)
            #expect(refused.output.contains("permissionDenied"), "\(refused.output)")

            let toggled = try await cli.run(["command", "test:lamp", "OnOffLight", "OnOff", "on"])
            #expect(toggled.status == 0, "\(toggled.output)")
            // `hearth device ID` shows the device (no `show` needed).
            let shown = try await cli.run(["device", "test:lamp"])
            #expect(shown.status == 0, "\(shown.output)")
            #expect(shown.output.contains("Lamp  (test:lamp)") && shown.output.contains("state: Power On"), "\(shown.output)")
            let watched = try await cli.run(["watch", "--device", "test:lamp", "--count", "1", "--json"])
            #expect(watched.output.contains("\"value\":true"), "\(watched.output)")

            #expect(try await cli.run(["logout"]).status == 0)
            let signedOut = try await cli.run(["devices"])
            #expect(signedOut.status != 0 && signedOut.output.contains("not signed in"), "\(signedOut.output)")

            let completion = try await cli.run(["--generate-completion-script", "bash"])
            #expect(completion.status == 0 && completion.output.contains("hearth"))
        }
    }
}

struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// The built `hearth` binary, run as a child process with its own config folder.
struct CLI {
    let binary: URL
    let directory: URL

    init(home: TestHome) throws {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = testBinary.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("hearth").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        binary = dir.appendingPathComponent("hearth")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw CLIError("the hearth binary was not found next to the tests; run swift build --build-tests first")
        }
        directory = home.directory.appendingPathComponent("cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Stores a session for the CLI as `hearth login` would.
    func signIn(home: TestHome, token: String) throws {
        try FileSessionStore(path: directory.appendingPathComponent("session.json").path).save(
            HearthCredentials(url: home.baseURL.absoluteString, token: token, tokenID: "-", principal: "-"))
    }

    struct Result: Sendable {
        let status: Int32
        let output: String
    }

    func run(_ arguments: [String], stdin: String? = nil) async throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["HEARTH_CONFIG_DIR"] = directory.path
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        let input = Pipe()
        process.standardInput = input
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { p in
            exited.continuation.yield(p.terminationStatus)
            exited.continuation.finish()
        }
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read on a dispatch thread: blocking a cooperative thread here would starve the
        // server the child process is talking to.
        let reader = out.fileHandleForReading
        let data = await withCheckedContinuation { (c: CheckedContinuation<Data, Never>) in
            DispatchQueue.global().async { c.resume(returning: reader.readDataToEndOfFile()) }
        }
        var iterator = exited.stream.makeAsyncIterator()
        let status = await iterator.next() ?? -1
        return Result(status: status, output: String(decoding: data, as: UTF8.self))
    }
}
