import Foundation
import HearthServer
import HomeCore
import HomeModel
import HomeStorage
import Logging
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The web page's static files and the name check it calls as you type, over real HTTP.
@Suite struct WebPageTests {
    /// The page as shipped: Sources/HearthServer/Web.
    static let shippedWeb = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/HearthServer/Web").standardizedFileURL

    func get(_ home: TestHome, _ path: String) async throws -> (Int, String, String) {
        let (data, response) = try await URLSession(configuration: .ephemeral).data(from: URL(string: home.baseURL.absoluteString + path)!)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Content-Type") ?? "", String(decoding: data, as: UTF8.self))
    }

    @Test func serves_the_page_at_root_and_its_modules_under_web() async throws {
        let config = HearthServer.Configuration(host: "127.0.0.1", port: 0, webDirectory: Self.shippedWeb.path)
        try await TestHome.with(configuration: config) { home in
            let (status, type, body) = try await get(home, "/")
            #expect(status == 200)
            #expect(type.hasPrefix("text/html"))
            #expect(body.contains("<title>Hearth</title>"))
            // Every /web/ file the page and its modules refer to is served with its type.
            let app = try await get(home, "/web/app.js")
            #expect(app.0 == 200)
            #expect(app.1.hasPrefix("text/javascript"))
            let refs = Set((body + app.2).matches(of: /\/web\/[a-z]+\.(js|css)/).map { String($0.output.0) })
            #expect(refs.count >= 3)
            for ref in refs {
                let (s, _, text) = try await get(home, ref)
                #expect(s == 200, "\(ref)")
                #expect(!text.isEmpty, "\(ref)")
            }
        }
    }

    @Test func refuses_hidden_unknown_and_escaping_paths() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("<p>hi</p>".utf8).write(to: root.appendingPathComponent("index.html"))
        try Data("export {}".utf8).write(to: root.appendingPathComponent("sub/x.js"))
        try Data("secret".utf8).write(to: root.appendingPathComponent(".env.js"))
        try Data("binary".utf8).write(to: root.appendingPathComponent("tool.sh"))
        let config = HearthServer.Configuration(host: "127.0.0.1", port: 0, webDirectory: root.path)
        try await TestHome.with(configuration: config) { home in
            let served = try await get(home, "/web/sub/x.js")
            #expect(served.0 == 200)
            #expect(served.2 == "export {}")
            for path in ["/web/.env.js", "/web/tool.sh", "/web/missing.js", "/web/sub/.x.js", "/index.html.sh"] {
                let refused = try await get(home, path)
                #expect(refused.0 == 404, "\(path)")
            }
            // A path that climbs out of the folder is refused before any file is looked up.
            let escaping = try await get(home, "/web/%2E%2E/%2E%2E/etc/passwd.html")
            #expect(escaping.0 == 400 || escaping.0 == 404)
            #expect(!escaping.2.contains("root:"))
        }
    }

    @Test func serves_no_page_when_no_folder_is_configured() async throws {
        try await TestHome.with { home in
            let root = try await get(home, "/")
            let health = try await get(home, "/api/v1/health")
            #expect(root.0 == 404)
            #expect(health.0 == 200)
        }
    }

    @Test func name_check_names_the_rule_and_suggests_an_alternative() async throws {
        try await TestHome.with { home in
            let token = try home.adminToken()
            let bad = try await home.call("POST", "names/check", token: token, body: #"{"name":"Desk plug!"}"#)
            #expect(bad.status == 200)
            #expect(bad.json["valid"] == .bool(false))
            #expect(bad.text.contains(NamingRules.Violation.invalidCharacter.rule))
            #expect(bad.json["suggestions"]?.listValue?.first?.stringValue == "Desk plug")

            let good = try await home.call("POST", "names/check", token: token, body: #"{"name":"  Desk   plug "}"#)
            #expect(good.json["valid"] == .bool(true))
            #expect(good.json["name"]?.stringValue == "Desk plug")

            let repeats = try await home.call(
                "POST", "names/check", token: token, body: #"{"name":"Living Room Lamp","room":"\#(TestHome.livingRoom.rawValue)"}"#)
            #expect(repeats.json["valid"] == .bool(true))
            #expect(repeats.json["warning"]?.stringValue != nil)
            #expect(repeats.json["suggestions"]?.listValue?.first?.stringValue == "Lamp")
        }
    }

    @Test func name_check_needs_a_signed_in_user_and_a_strict_body() async throws {
        try await TestHome.with { home in
            let anonymous = try await home.call("POST", "names/check", body: #"{"name":"Lamp"}"#)
            #expect(anonymous.status == 401)
            let extra = try await home.call("POST", "names/check", token: try home.adminToken(), body: #"{"name":"Lamp","colour":"red"}"#)
            #expect(extra.status == 400)
            #expect(extra.text.contains("colour"))
        }
    }

    @Test func recent_log_keeps_the_newest_lines_in_order() {
        let log = RecentLog(capacity: 3)
        var logger = Logger(label: "t") { label in log.handler(label: label, level: .info) }
        logger[metadataKey: "plugin"] = "gpio"
        logger.debug("not kept: below the level")
        for i in 1...5 { logger.info("line \(i)") }
        #expect(log.recent().map(\.message) == ["line 3 plugin=gpio", "line 4 plugin=gpio", "line 5 plugin=gpio"])
        #expect(log.recent(2).map(\.message) == ["line 4 plugin=gpio", "line 5 plugin=gpio"])
        #expect(log.recent().allSatisfy { $0.level == "info" && $0.label == "t" })
    }

    @Test func logs_route_serves_recent_lines_to_users_and_refuses_apps() async throws {
        let log = RecentLog(capacity: 10)
        let logger = Logger(label: "hearth.test") { label in log.handler(label: label, level: .info) }
        logger.warning("the broker went away")
        try await TestHome.with(recentLog: log) { home in
            let reply = try await home.call("GET", "logs?limit=5", token: try home.memberToken())
            #expect(reply.status == 200)
            #expect(reply.json.listValue?.first?["message"]?.stringValue == "the broker went away")
            #expect(reply.json.listValue?.first?["level"]?.stringValue == "warning")
            let app = try home.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: false))
            let refused = try await home.call("GET", "logs", token: app.token)
            #expect(refused.status == 403)
        }
    }
}
