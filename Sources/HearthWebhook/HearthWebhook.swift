// libHearthWebhook.so: the automations' webhook POST, over URLSession.
//
// FoundationNetworking brings libcurl, its TLS library and more into every process that links
// it, and maps them at start whether or not a webhook ever runs. hearthd loads this library
// with `dlopen` the first time an automation posts a webhook (HomeAutomation's
// `WebhookLibrary`), so the daemon's start and idle memory do without them.
//
// The interface is plain C (no Swift types cross it), versioned by `hearth_webhook_abi`.
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The version of the C interface below; the loader refuses another.
@_cdecl("hearth_webhook_abi")
public func hearthWebhookABI() -> Int32 { 1 }

/// Called once per post: `context` as given, the HTTP status (0 without an answer), `outcome`
/// (0 answered, 1 timed out, 2 failed) and, unless answered, a message (valid during the call).
public typealias HearthWebhookCompletion = @convention(c) (
    _ context: UnsafeMutableRawPointer?, _ status: Int32, _ outcome: Int32, _ message: UnsafePointer<CChar>?
) -> Void

/// POSTs `length` bytes of JSON at `body` to `url`, with a timeout of `timeoutSeconds` for the
/// whole request; calls `completion` exactly once, on another thread, when it is over.
///
/// The request is not cancellable: cancelling a URLSession request in flight can deadlock on
/// Linux; the timeout ends it instead.
@_cdecl("hearth_webhook_post")
public func hearthWebhookPost(
    _ url: UnsafePointer<CChar>, _ body: UnsafeRawPointer?, _ length: Int, _ timeoutSeconds: Double,
    _ context: UnsafeMutableRawPointer?, _ completion: HearthWebhookCompletion
) {
    let text = String(cString: url)
    guard let target = URL(string: text) else {
        "not a URL: \(text)".withCString { completion(context, 0, 2, $0) }
        return
    }
    var request = URLRequest(url: target)
    request.httpMethod = "POST"
    request.httpBody = body.map { Data(bytes: $0, count: length) } ?? Data()
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue("hearth-automation", forHTTPHeaderField: "User-Agent")
    request.timeoutInterval = timeoutSeconds
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = timeoutSeconds
    configuration.timeoutIntervalForResource = timeoutSeconds
    let session = URLSession(configuration: configuration)
    let task = session.dataTask(with: request) { _, response, error in
        if let error = error as? URLError, error.code == .timedOut {
            "timed out".withCString { completion(context, 0, 1, $0) }
        } else if let error {
            error.localizedDescription.withCString { completion(context, 0, 2, $0) }
        } else {
            completion(context, Int32((response as? HTTPURLResponse)?.statusCode ?? 0), 0, nil)
        }
    }
    task.resume()
    session.finishTasksAndInvalidate()
}
