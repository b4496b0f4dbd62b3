import Foundation
import Testing

/// What the shipped systemd unit promises beyond starting hearthd.
@Suite struct SystemdUnitTests {
    static func settings() throws -> [String: String] {
        let text = try String(contentsOfFile: repositoryRoot + "/etc/hearthd.service", encoding: .utf8)
        var settings: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            settings[String(line[..<eq]).trimmingCharacters(in: .whitespaces)] = String(line[line.index(after: eq)...])
        }
        return settings
    }

    /// Connections, WebSockets, plugin sockets and the database each take a descriptor; the
    /// default soft limit of 1024 runs out long before the connection cap does.
    @Test func raisesTheDescriptorLimit() throws {
        let limit = try #require(try Self.settings()["LimitNOFILE"], "etc/hearthd.service sets no LimitNOFILE")
        let soft = limit.split(separator: ":").first.flatMap { Int($0) } ?? 0
        #expect(soft >= 8192, "LimitNOFILE=\(limit)")
    }
}
