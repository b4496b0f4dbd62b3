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
        Caller(context: context, completion: completion).finish(outcome: 2, message: "not a URL: \(text)")
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
    let caller = Caller(context: context, completion: completion)
    let task = session.dataTask(with: request) { _, response, error in
        if let error = error as? URLError, error.code == .timedOut {
            caller.finish(outcome: 1, message: "timed out")
        } else if let error {
            caller.finish(outcome: 2, message: error.localizedDescription)
        } else {
            caller.finish(status: Int32((response as? HTTPURLResponse)?.statusCode ?? 0), outcome: 0)
        }
    }
    task.resume()
    session.finishTasksAndInvalidate()
}

/// Who to tell: the caller's context and C callback, handed over for exactly one call, from
/// whichever thread URLSession completes on (the interface's contract; hence unchecked).
struct Caller: @unchecked Sendable {
    let context: UnsafeMutableRawPointer?
    let completion: HearthWebhookCompletion

    func finish(status: Int32 = 0, outcome: Int32, message: String? = nil) {
        if let message {
            message.withCString { completion(context, status, outcome, $0) }
        } else {
            completion(context, status, outcome, nil)
        }
    }
}
