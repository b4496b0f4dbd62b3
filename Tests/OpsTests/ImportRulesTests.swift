import Foundation
import Testing

/// `scripts/check-imports`: the layout table in README.md is the rule for every room's imports.
@Suite struct ImportRulesTests {
    @Test func the_repository_follows_its_layout_table() async throws {
        let r = try await run(repositoryRoot + "/scripts/check-imports", [], in: repositoryRoot)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("follow the layout table"))
    }

    @Test func a_forbidden_import_is_named_with_its_file_and_line() async throws {
        let dir = try Scratch("hearth-imports")
        defer { dir.remove() }
        let fm = FileManager.default
        try fm.copyItem(atPath: repositoryRoot + "/README.md", toPath: dir.at("README.md"))
        for folder in ["Sources/HomeCore", "Sources/hearth", "Plugins/MQTT", "Sources/HearthServer"] {
            try fm.createDirectory(atPath: dir.at(folder), withIntermediateDirectories: true)
        }
        try "import HomeModel\npublic import HomeStorage\n".write(toFile: dir.at("Sources/HomeCore/Leak.swift"), atomically: true, encoding: .utf8)
        try "import HearthClient\n@testable import HomeCore\n".write(toFile: dir.at("Sources/hearth/Leak.swift"), atomically: true, encoding: .utf8)
        try "import DriverAPI\nimport PluginHost\n".write(toFile: dir.at("Plugins/MQTT/Leak.swift"), atomically: true, encoding: .utf8)
        // The server reaches automations through HomeCore's AutomationControl, never the engine.
        try "import HearthAPI\nimport HomeAutomation\nimport HomeStorage\n".write(
            toFile: dir.at("Sources/HearthServer/Leak.swift"), atomically: true, encoding: .utf8)
        let r = try await run(repositoryRoot + "/scripts/check-imports", [dir.path], in: dir.path)
        #expect(r.status != 0)
        #expect(r.stderr.contains("Sources/HomeCore/Leak.swift:2: imports HomeStorage"), "\(r.stderr)")
        #expect(r.stderr.contains("Sources/hearth/Leak.swift:2: imports HomeCore"), "\(r.stderr)")
        #expect(r.stderr.contains("Plugins/MQTT/Leak.swift:2: imports PluginHost"), "\(r.stderr)")
        #expect(r.stderr.contains("Sources/HearthServer/Leak.swift:2: imports HomeAutomation"), "\(r.stderr)")
        #expect(r.stderr.contains("Sources/HearthServer/Leak.swift:3: imports HomeStorage"), "\(r.stderr)")
        #expect(!r.stderr.contains("imports HomeModel") && !r.stderr.contains("imports HearthClient") && !r.stderr.contains("imports DriverAPI")
                && !r.stderr.contains("imports HearthAPI"))
    }
}
