import Foundation
import HearthAPI
import HomeCore
import HomeModel
import HomeStorage
import Hummingbird
import NIOCore

/// Body of `POST /api/v1/names/check`.
struct NameCheckRequest: WireRequest {
    static let keys: Set<String> = ["name", "room"]
    let name: String
    let room: String?
}

/// The verdict on a proposed name, with each broken rule in words.
struct NameCheckResponse: Codable, Sendable {
    let name: String
    let valid: Bool
    let rules: [String]
    let warning: String?
    let suggestions: [String]
}

/// The web page: plain HTML/CSS/JS modules served from a folder, no build step.
///
/// The folder is `HearthServer.Configuration.webDirectory`; ``defaultWebDirectory()`` finds
/// the copy SwiftPM puts beside the binary (`Hearth_HearthServer.resources/Web`) or an
/// installed `../share/hearth/web`.
enum WebPage {
    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "json": "application/json; charset=utf-8", "ico": "image/x-icon",
        "webmanifest": "application/manifest+json",
    ]

    /// Reads `relative` under `root`; nil for anything outside it, hidden, unknown or missing.
    static func file(_ relative: String, in root: String) -> Response? {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.isEmpty, !parts.contains(where: { $0.hasPrefix(".") }),
            let ext = parts.last?.split(separator: ".").last.map(String.init), let type = contentTypes[ext.lowercased()]
        else { return nil }
        let path = ([root] + parts.map(String.init)).joined(separator: "/")
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "no-cache", .init("X-Content-Type-Options")!: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension HearthServer {
    /// Where the page's files are when the configuration names no folder: the SwiftPM resource
    /// copy beside the running binary, else `../share/hearth/web` relative to it; nil if neither exists.
    public static func defaultWebDirectory(executable: String? = nil) -> String? {
        let path = executable ?? Bundle.main.executablePath ?? ProcessInfo.processInfo.arguments.first ?? ""
        let exe = URL(fileURLWithPath: path).resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            exe.appendingPathComponent("Hearth_HearthServer.resources/Web").path,
            exe.appendingPathComponent("../share/hearth/web").standardizedFileURL.path,
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/index.html") }
    }

    func addWebRoutes(to router: Router<APIRequestContext>, api: RouterGroup<APIRequestContext>) {
        if let root = configuration.webDirectory {
            router.get("/") { _, _ in
                guard let r = WebPage.file("index.html", in: root) else { throw HomeError.notFound("the web page (index.html in \(root))") }
                return r
            }
            router.get("web/**") { _, context in
                let rest = context.parameters.getCatchAll().joined(separator: "/")
                guard let r = WebPage.file(rest, in: root) else { throw HomeError.notFound("web/\(rest)") }
                return r
            }
        }
        api.get("logs") { request, context in
            let s = try context.requireSession()
            guard s.principal.role != .app else { throw HomeError.permissionDenied("apps cannot read the daemon's log") }
            let limit = request.uri.queryParameters.get("limit").flatMap { Int($0) } ?? 200
            return APIResponse.json(recentLog?.recent(limit) ?? [])
        }
        api.post("names/check") { request, context in
            let home = try home(context)
            let body = try await request.decodeStrict(NameCheckRequest.self, limit: configuration.maxBodySize)
            let v = home.checkName(body.name, room: body.room.map { RoomID(rawValue: $0) })
            return APIResponse.json(
                NameCheckResponse(name: v.name, valid: v.isValid, rules: v.violations.map(\.rule), warning: v.warning, suggestions: v.suggestions))
        }
    }
}
