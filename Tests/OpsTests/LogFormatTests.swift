import Foundation
import Testing

/// hearthd's `log.format`: each line of the real daemon's standard error in the chosen form.
@Suite struct LogFormatTests {
    static func check(format: String, journal: Bool = false) async throws -> Run {
        let dir = try Scratch("hearth-log")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: buildDirectory + "/libDemoPlugin.so", toPath: dir.at("plugins/libDemoPlugin.so"))
        try "log:\n  level: info\n  format: \(format)\nstorage:\n  database: \(dir.at("hearth.sqlite"))\nplugins:\n  directories: [\(dir.at("plugins"))]\n"
            .write(toFile: dir.at("hearth.yaml"), atomically: true, encoding: .utf8)
        var environment: [String: String] = [:]
        if journal { environment["JOURNAL_STREAM"] = "8:12345" }
        return try await run(buildDirectory + "/hearthd", ["--config", dir.at("hearth.yaml"), "--check"], environment: environment, in: dir.path)
    }

    @Test func json_lines_are_json_objects_with_level_label_and_message() async throws {
        let r = try await Self.check(format: "json")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
            #expect(object?["level"] != nil && object?["label"] != nil && object?["msg"] != nil, "\(line)")
            #expect(object?["time"] != nil)
        }
        #expect(r.stderr.contains(#""msg":"configuration and plugins checked""#))
        #expect(r.stderr.contains(#""plugins":"1""#))
    }

    @Test func keyvalue_lines_under_journald_carry_priorities_and_no_time() async throws {
        let r = try await Self.check(format: "keyvalue", journal: true)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.hasPrefix("<"), "\(line)")
            #expect(!line.contains(" time="))
        }
        #expect(r.stderr.contains(#"<6>level=info label=hearthd msg="configuration and plugins checked""#))
    }

    @Test func unknown_format_is_refused_with_line_and_key() async throws {
        let r = try await Self.check(format: "xml")
        #expect(r.status == 78)
        #expect(r.stderr.contains("hearth.yaml:3: log.format: must be one of text, keyvalue, json"))
    }
}
