public import Foundation
public import HomeModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `libHearthWebhook.so`, which posts the automations' webhooks: loaded with `dlopen` at the
/// first webhook, so that hearthd does not map FoundationNetworking, libcurl and its TLS stack
/// at start (issue 22).
///
/// It is looked for beside the running executable, then in `../lib` from it (the installed
/// layout: `bin/hearthd`, `lib/libHearthWebhook.so`). Without it a webhook step fails with an
/// error naming the paths looked at; the daemon goes on.
public final class WebhookLibrary: Sendable {
    /// The library's file name.
    public static let fileName = "libHearthWebhook.so"
    /// The C interface version this build speaks (`hearth_webhook_abi`).
    static let abi: Int32 = 1
    /// The one hearthd uses (the executable's folder and `../lib`).
    public static let standard = WebhookLibrary()

    /// Where to look, in order.
    public let directories: [String]
    let loaded = Mutex<Entry?>(nil)

    typealias Completion = @convention(c) (UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<CChar>?) -> Void
    typealias Post = @convention(c) (UnsafePointer<CChar>, UnsafeRawPointer?, Int, Double, UnsafeMutableRawPointer?, Completion) -> Void
    typealias ABI = @convention(c) () -> Int32

    /// The loaded entry point: a C function of a library that is never unloaded.
    struct Entry: @unchecked Sendable { let post: Post }

    /// - Parameter directories: where to look for ``fileName``; nil: beside the executable, then `../lib`.
    public init(directories: [String]? = nil) {
        self.directories = directories ?? Self.besideExecutable()
    }

    static func besideExecutable() -> [String] {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let folder = URL(fileURLWithPath: exe).deletingLastPathComponent()
        return [folder.path, folder.deletingLastPathComponent().appendingPathComponent("lib").path]
    }

    /// Loads the library once (a failure is tried again at the next webhook).
    func entry() throws(HomeError) -> Entry {
        try loaded.withLock { (loaded: inout Entry?) throws(HomeError) -> Entry in
            if let loaded { return loaded }
            let paths = directories.map { URL(fileURLWithPath: $0).appendingPathComponent(Self.fileName).path }
            guard let path = paths.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw .unsupportedOperation(
                    "webhooks need \(Self.fileName), which is not installed (looked for \(paths.joined(separator: ", ")))")
            }
            guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
                throw .unsupportedOperation("webhooks need \(path), which cannot be loaded: \(reason)")
            }
            guard let abiSymbol = dlsym(handle, "hearth_webhook_abi"), let postSymbol = dlsym(handle, "hearth_webhook_post") else {
                dlclose(handle)
                throw .unsupportedOperation("\(path) is not Hearth's webhook library (hearth_webhook_post is missing)")
            }
            let version = unsafeBitCast(abiSymbol, to: ABI.self)()
            guard version == Self.abi else {
                dlclose(handle)
                throw .unsupportedOperation("\(path) speaks webhook interface \(version), this hearthd \(Self.abi): install the matching library")
            }
            let entry = Entry(post: unsafeBitCast(postSymbol, to: Post.self))
            loaded = entry
            return entry
        }
    }

    /// What the library answered, handed from its thread to the waiting task.
    final class Answer: Sendable {
        let continuation: CheckedContinuation<(status: Int32, outcome: Int32, message: String?), Never>
        init(_ continuation: CheckedContinuation<(status: Int32, outcome: Int32, message: String?), Never>) {
            self.continuation = continuation
        }
    }

    /// POSTs `body` (JSON) to `url`; returns the HTTP status.
    /// - Throws: `timeout` when there is no answer within `timeout`; `driverError` when the
    ///   request fails; `unsupportedOperation` when the library is missing or does not load.
    public func post(url: URL, body: Data, timeout: Duration) async throws(HomeError) -> Int {
        let post = try entry().post
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let answer = await withCheckedContinuation { continuation in
            let context = Unmanaged.passRetained(Answer(continuation)).toOpaque()
            body.withUnsafeBytes { bytes in
                url.absoluteString.withCString { target in
                    post(target, bytes.baseAddress, bytes.count, seconds, context) { context, status, outcome, message in
                        guard let context else { return }
                        let answer = Unmanaged<Answer>.fromOpaque(context).takeRetainedValue()
                        answer.continuation.resume(returning: (status, outcome, message.map { String(cString: $0) }))
                    }
                }
            }
        }
        switch answer.outcome {
        case 0: return Int(answer.status)
        case 1: throw .timeout("\(url.absoluteString) did not answer within \(timeout)")
        default: throw .driverError("POST \(url.absoluteString) failed: \(answer.message ?? "unknown error")")
        }
    }
}
