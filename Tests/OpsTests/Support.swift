import Foundation
import Testing

/// The build folder: the test binary sits in it, beside `hearthd`, `hearth` and the plugins.
let buildDirectory: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: exe)
    while url.path != "/" && !FileManager.default.fileExists(atPath: url.deletingLastPathComponent().appendingPathComponent("hearthd").path) {
        url = url.deletingLastPathComponent()
    }
    return url.deletingLastPathComponent().path
}()

let repositoryRoot: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

struct Scratch {
    let path: String
    init(_ prefix: String = "hearth-ops") throws {
        path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func at(_ relative: String) -> String { (path as NSString).appendingPathComponent(relative) }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

struct Run: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs a real child process to its end (output through files, so no pipe can fill up).
func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], in directory: String) async throws -> Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    // Output files go to the temporary directory: a run cut short must not leave files in the checkout.
    let out = NSTemporaryDirectory() + "hearth-ops-run-\(UUID().uuidString).out"
    let err = NSTemporaryDirectory() + "hearth-ops-run-\(UUID().uuidString).err"
    _ = FileManager.default.createFile(atPath: out, contents: nil)
    _ = FileManager.default.createFile(atPath: err, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
    process.standardInput = FileHandle.nullDevice
    let ended = AsyncStream<Void>.makeStream()
    process.terminationHandler = { _ in ended.continuation.finish() }
    try process.run()
    for await _ in ended.stream {}
    defer {
        try? FileManager.default.removeItem(atPath: out)
        try? FileManager.default.removeItem(atPath: err)
    }
    return Run(
        status: process.terminationStatus,
        stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
}

func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
