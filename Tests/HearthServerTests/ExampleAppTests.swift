import Foundation
import HearthAPI
import HomeStorage
import Synchronization
import Testing

/// `Examples/SeedApp`: an app package that depends on the `HearthClient` and `HomeCombine`
/// library products (not on `Sources/`), built here with SwiftPM and run against a real server.
/// It connects through the consent step, lists, observes with publishers, sends a command, and
/// sees its publishers fail with `permissionDenied` once it disconnects.
@Suite struct ExampleAppTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a child process; its output arrives line by line.
    final class Child {
        let process: Process
        let lines: AsyncStream<String>

        init(_ executable: URL, _ arguments: [String], directory: URL? = nil) throws {
            process = Process()
            process.executableURL = executable
            process.arguments = arguments
            if let directory { process.currentDirectoryURL = directory }
            let out = Pipe()
            process.standardOutput = out
            process.standardError = out
            process.standardInput = FileHandle.nullDevice
            let (lines, sink) = AsyncStream<String>.makeStream()
            self.lines = lines
            let buffer = Mutex(Data())
            out.fileHandleForReading.readabilityHandler = { handle in
                let chunk = handle.availableData
                if chunk.isEmpty {
                    handle.readabilityHandler = nil
                    let rest = buffer.withLock { b in defer { b = Data() }; return b }
                    if !rest.isEmpty { sink.yield(String(decoding: rest, as: UTF8.self)) }
                    sink.finish()
                    return
                }
                let complete: [String] = buffer.withLock { b in
                    b.append(chunk)
                    var found: [String] = []
                    while let newline = b.firstIndex(of: 0x0A) {
                        found.append(String(decoding: b[b.startIndex..<newline], as: UTF8.self))
                        b.removeSubrange(b.startIndex...newline)
                    }
                    return found
                }
                for line in complete { sink.yield(line) }
            }
            try process.run()
        }

        func stop() { if process.isRunning { process.terminate() } }
    }

    @Test(.timeLimit(.minutes(40))) func seedApp_buildsAgainstTheProducts_andRunsOverTheNetwork() async throws {
        // Build the example (its own build folder under .build/, kept warm between runs).
        let scratch = Self.root.appendingPathComponent(".build/examples/SeedApp")
        // scripts/test builds it before the suite runs (HEARTH_EXAMPLE_PREBUILT=1), so that its
        // compile does not compete with the parallel tests for the cores; run alone, this test
        // builds it itself.
        if ProcessInfo.processInfo.environment["HEARTH_EXAMPLE_PREBUILT"] != "1" {
            let swift = URL(fileURLWithPath: "/usr/bin/env")
            let build = try Child(
                swift, ["swift", "build", "--package-path", Self.root.appendingPathComponent("Examples/SeedApp").path, "--scratch-path", scratch.path])
            var buildLog: [String] = []
            for await line in build.lines { buildLog.append(line) }
            build.process.waitUntilExit()
            try #require(build.process.terminationStatus == 0, "the example app did not build:\n\(buildLog.suffix(40).joined(separator: "\n"))")
        }
        let binary = scratch.appendingPathComponent("debug/SeedApp")
        #expect(FileManager.default.isExecutableFile(atPath: binary.path))

        try await TestHome.with { server in
            let admin = try server.adminToken()
            let app = try Child(binary, [server.baseURL.absoluteString])
            defer { app.stop() }
            var output: [String] = []
            for await line in app.lines {
                output.append(line)
                if line.hasPrefix("pending ") {
                    // The admin approves the app's request.
                    let id = String(line.dropFirst("pending ".count))
                    let approved = try await server.call("POST", "apps/requests/\(id)/approve", token: admin, body: "{}")
                    #expect(approved.status == 200, "\(approved.text)")
                }
            }
            app.process.waitUntilExit()
            #expect(app.process.terminationStatus == 0, "\(output.joined(separator: "\n"))")
            let expected = [
                "connected",
                "devices Door,Lamp",
                "structure Home",
                "The lamp has changed! Lamp",
                "device Lamp",
                "types 1",
                "rooms Living Room",
                "onOff false",
                "onOff true",
                "device publisher: failure permissionDenied",
                "done",
            ]
            #expect(Array(output.drop { $0.hasPrefix("pending") }) == expected, "\(output.joined(separator: "\n"))")
        }
    }
}
