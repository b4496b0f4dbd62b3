import DriverAPI
import Foundation
import HearthAPI
import HearthClient
import HearthServer
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Synchronization
import Testing

/// `POST /scenes/{id}/capture` and `POST /scenes` with `capture: true` over a real server, the
/// scenes in a real SQLite file; the Swift client's `captureScene`.
@Suite(.timeLimit(.minutes(1))) struct SceneCaptureTests {
    /// A scene book and engine whose scenes live in a real SQLite file in `directory`.
    final class Stored: Sendable {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scene-capture-\(UUID().uuidString)")
        var path: String { directory.appendingPathComponent("hearth.sqlite").path }
        func make(_ core: HomeCore) throws -> (SceneBook, AutomationEngine) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let db = try HearthDatabase(path: path, extraMigrations: AutomationStateStore.registerMigrations(in:))
            let scenes = try SceneBook(core: core, store: db.automationStore())
            return (scenes, AutomationEngine(core: core, scenes: scenes))
        }
        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    static let lampOn = #"{"id":"evening","name":"Evening","targets":[{"device":"test:lamp","trait":"OnOff","attribute":"OnOff","value":true}]}"#

    @Test func capture_storesTheLampsStateNow_bumpsTheRevision_adminsOnly() async throws {
        let stored = Stored()
        try await TestHome.with(automations: { try stored.make($0) }) { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            #expect(try await home.call("POST", "scenes", token: admin, body: Self.lampOn).status == 201)
            // The lamp is off now: capture stores off.
            let captured = try await home.call("POST", "scenes/evening/capture", token: admin)
            #expect(captured.status == 200, "\(captured.text)")
            #expect(captured.json["revision"] == 2)
            #expect(captured.json["targets"]?.listValue?.first?["value"] == false, "\(captured.text)")
            #expect(captured.json["isActive"] == true, "the scene holds what the devices do now")
            #expect(try await home.call("POST", "scenes/evening/capture", token: member).status == 403)
            #expect(try await home.call("POST", "scenes/evening/capture?revision=1", token: admin).status == 409, "a stale revision")
            #expect(try await home.call("POST", "scenes/nothing/capture", token: admin).status == 404)

            // The lamp goes on; the Swift client captures again.
            home.driver.context.report([AttributeReport(localID: "lamp", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)])
            let client = HearthClient.Home(connection: HearthConnection(baseURL: home.baseURL, token: admin))
            let again = try await client.captureScene("evening")
            #expect(again.revision == 3)
            #expect(again.targets.map(\.value) == [.bool(true)])
            #expect(try await client.scenes().map(\.id) == ["evening"])
        }
        // What was captured is in the file.
        let db = try HearthDatabase(path: stored.path, extraMigrations: AutomationStateStore.registerMigrations(in:))
        let reread = try db.automationStore().loadScenes()
        #expect(reread.first?.revision == 3)
        #expect(reread.first?.targets.first?.value == .bool(true))
    }

    @Test func createByCapture_takesTargetsWithoutValues() async throws {
        let stored = Stored()
        try await TestHome.with(automations: { try stored.make($0) }) { home in
            let admin = try home.adminToken()
            home.driver.context.report([AttributeReport(localID: "lamp", trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)])
            let body = #"{"id":"now","name":"Now","capture":true,"targets":[{"device":"test:lamp","trait":"OnOff","attribute":"OnOff"}]}"#
            let made = try await home.call("POST", "scenes", token: admin, body: body)
            #expect(made.status == 201, "\(made.text)")
            #expect(made.json["targets"]?.listValue?.first?["value"] == true, "\(made.text)")
            #expect(made.json["revision"] == 1)
            #expect(made.json["capture"] == nil, "capture is a request flag, not stored")
            // Without capture a target needs its value.
            let missing = try await home.call("POST", "scenes", token: admin, body: body.replacingOccurrences(of: #""capture":true,"#, with: "").replacingOccurrences(of: "now", with: "later"))
            #expect(missing.status == 400, "\(missing.text)")
            #expect(missing.text.contains("targets[0].value"), "\(missing.text)")
        }
    }

    /// `hearth scenes capture ID`: the built CLI, signed in to the real server.
    @Test func cli_capturesAScene() async throws {
        let build = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/hearth").path
        guard FileManager.default.isExecutableFile(atPath: build) else {
            Issue.record("the hearth CLI must be built first (swift build --build-tests)")
            return
        }
        let stored = Stored()
        try await TestHome.with(automations: { try stored.make($0) }) { home in
            let admin = try home.adminToken()
            #expect(try await home.call("POST", "scenes", token: admin, body: Self.lampOn).status == 201)
            let config = home.directory.appendingPathComponent("cli").path
            try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
            /// Runs the CLI to its end; its output goes to a file (no pipe to fill).
            func hearth(_ arguments: [String], stdin: String = "") async throws -> (Int32, String) {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: build)
                process.arguments = arguments
                var env = ProcessInfo.processInfo.environment
                env["HEARTH_CONFIG_DIR"] = config
                env.removeValue(forKey: "HEARTH_URL")
                env.removeValue(forKey: "HEARTH_PASSWORD")
                process.environment = env
                let out = config + "/out-\(UUID().uuidString.prefix(8))", input = config + "/in-\(UUID().uuidString.prefix(8))"
                _ = FileManager.default.createFile(atPath: out, contents: nil)
                _ = FileManager.default.createFile(atPath: input, contents: Data(stdin.utf8))
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
                process.standardOutput = handle
                process.standardError = handle
                process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
                let ended = AsyncStream<Void>.makeStream()
                process.terminationHandler = { _ in ended.continuation.finish() }
                try process.run()
                for await _ in ended.stream {}
                return (process.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
            }
            let login = try await hearth(["login", "--url", home.baseURL.absoluteString, "--username", "admin", "--password-stdin"], stdin: "correct horse\n")
            #expect(login.0 == 0, "\(login.1)")
            let captured = try await hearth(["scenes", "capture", "evening"])
            #expect(captured.0 == 0, "\(captured.1)")
            #expect(captured.1.contains("captured scene evening (revision 2)"), "\(captured.1)")
            #expect(captured.1.contains("false"), "the lamp is off now: \(captured.1)")
            let json = try await hearth(["scenes", "capture", "evening", "--json"])
            #expect(json.1.contains("\"revision\" : 3"), "\(json.1)")
            let missing = try await hearth(["scenes", "capture", "nothing"])
            #expect(missing.0 != 0, "\(missing.1)")
        }
    }
}
