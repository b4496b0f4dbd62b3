import Foundation
import Testing

/// `storage.lastSeenInterval` in hearth.yaml: a bad value names its line.
@Suite struct StorageConfigTests {
    @Test func aBadLastSeenIntervalNamesItsLine() async throws {
        let dir = try Scratch("hearth-storage-config")
        defer { dir.remove() }
        for value in ["0", "soon", "1.5"] {
            try "storage:\n  lastSeenInterval: \(value)\n".write(toFile: dir.at("bad.yaml"), atomically: true, encoding: .utf8)
            let bad = try await run(buildDirectory + "/hearthd", ["--config", dir.at("bad.yaml"), "--check"], in: dir.path)
            #expect(bad.status == 78)
            #expect(bad.stderr.contains("bad.yaml:2: storage.lastSeenInterval: expected a whole number of seconds"), "\(bad.stderr)")
        }
        // A good one passes the check.
        try FileManager.default.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
        try "storage:\n  database: \(dir.at("hearth.sqlite"))\n  lastSeenInterval: 300\nplugins:\n  directories: [\(dir.at("plugins"))]\n"
            .write(toFile: dir.at("good.yaml"), atomically: true, encoding: .utf8)
        let good = try await run(buildDirectory + "/hearthd", ["--config", dir.at("good.yaml"), "--check"], in: dir.path)
        #expect(good.status == 0, "\(good.stderr)")
    }
}
