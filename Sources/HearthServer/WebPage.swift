import Foundation
import HomeModel
import Hummingbird
import Logging
import NIOPosix

/// The web page: plain HTML/CSS/JS modules served from a folder, no build step.
///
/// The folder is `HearthServer.Configuration.webDirectory`; ``HearthServer/defaultWebDirectory(executable:)``
/// finds the copy SwiftPM puts beside the binary (`Hearth_HearthServer.resources/Web`) or an
/// installed `../share/hearth/web`. Hummingbird's `FileMiddleware` serves it (ranges, ETags,
/// HEAD, `..` refused) over ``WebFiles``, which refuses hidden files and unknown types.
enum WebPage {
    /// The only file types served, with the type each is served as.
    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "json": "application/json; charset=utf-8", "ico": "image/x-icon",
        "webmanifest": "application/manifest+json",
    ]

    /// Whether a URL path (relative to the page's folder) may be served at all.
    static func isServable(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let last = parts.last, !parts.contains(where: { $0.hasPrefix(".") }) else { return false }
        guard let dot = last.lastIndex(of: ".") else { return false }
        return contentTypes[last[last.index(after: dot)...].lowercased()] != nil
    }

    /// Serves the page from `root`: `/` answers index.html, `/web/…` the folder's files.
    static func serve(from root: String, on router: Router<APIRequestContext>, logger: Logger) {
        let files = LocalFileSystem(rootFolder: root, threadPool: .singleton, logger: logger)
        let types = Dictionary(uniqueKeysWithValues: contentTypes.compactMap { ext, type in MediaType(from: type).map { (ext, $0) } })
        let cache = CacheControl([(MediaType(type: .any), [.noCache])])
        router.add(
            middleware: FileMiddleware<APIRequestContext, WebFiles>(
                fileProvider: WebFiles(files: files, allowed: { $0 == "/" || $0 == "/index.html" }), cacheControl: cache,
                searchForIndexHtml: true
            ).withAdditionalMediaTypes(forFileExtensions: types))
        router.add(
            middleware: FileMiddleware<APIRequestContext, WebFiles>(
                fileProvider: WebFiles(files: files, allowed: isServable), urlBasePath: "/web", cacheControl: cache
            ).withAdditionalMediaTypes(forFileExtensions: types))
    }
}

/// The page's folder as `FileMiddleware` sees it: only the paths `allowed` says, so hidden
/// files and unknown types are not found rather than served.
struct WebFiles: FileProvider {
    typealias FileAttributes = LocalFileSystem.FileAttributes
    typealias FileIdentifier = LocalFileSystem.FileIdentifier

    let files: LocalFileSystem
    let allowed: @Sendable (String) -> Bool

    func getFileIdentifier(_ path: String) -> FileIdentifier? {
        allowed(path) ? files.getFileIdentifier(path) : nil
    }

    func getAttributes(id: FileIdentifier) async throws -> FileAttributes? {
        try await files.getAttributes(id: id)
    }

    func loadFile(id: FileIdentifier, context: some RequestContext) async throws -> ResponseBody {
        try await files.loadFile(id: id, context: context)
    }

    func loadFile(id: FileIdentifier, range: ClosedRange<Int>, context: some RequestContext) async throws -> ResponseBody {
        try await files.loadFile(id: id, range: range, context: context)
    }
}

/// `X-Content-Type-Options: nosniff` on every answer: a browser takes each type as sent.
struct NoSniffMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        return response
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
}
