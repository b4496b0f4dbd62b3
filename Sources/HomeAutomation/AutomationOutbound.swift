public import Foundation
public import HomeModel

/// Where `publish` and `webhook` actions go: hearthd gives the engine an MQTT connection and an
/// HTTP client; tests give real ones on loopback. Without one, those steps fail with
/// `unsupportedOperation` (and simulate still shows what they would send).
public protocol AutomationOutbound: Sendable {
    /// Publishes one message (QoS 1); throws when there is no broker connection.
    func publish(topic: String, payload: [UInt8], retain: Bool) async throws(HomeError)
    /// POSTs `body` (JSON) to `url`; returns the HTTP status. Throws `timeout` after `timeout`,
    /// `unreachable`-like errors as `driverError`.
    func post(url: URL, body: Data, timeout: Duration) async throws(HomeError) -> Int
}

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The outlets hearthd gives the engine: webhooks with `URLSession`, MQTT through `publisher`
/// (hearthd's connection to the home's broker; nil: `publish` steps fail with `unsupportedOperation`).
public struct StandardOutbound: AutomationOutbound {
    public typealias Publisher = @Sendable (_ topic: String, _ payload: [UInt8], _ retain: Bool) async throws(HomeError) -> Void
    let publisher: Publisher?

    public init(publisher: Publisher? = nil) { self.publisher = publisher }

    public func publish(topic: String, payload: [UInt8], retain: Bool) async throws(HomeError) {
        guard let publisher else { throw .unsupportedOperation("no MQTT broker is configured for automations (plugins.mqtt.broker)") }
        try await publisher(topic, payload, retain)
    }

    public func post(url: URL, body: Data, timeout: Duration) async throws(HomeError) -> Int {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("hearth-automation", forHTTPHeaderField: "User-Agent")
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        request.timeoutInterval = seconds
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        do {
            // Not cancelled with the run (restart mode, a stop): cancelling a URLSession request
            // in flight can deadlock on Linux; the webhook's timeout ends it instead.
            let (_, response) = try await Task { try await session.data(for: request) }.value
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        } catch let error as URLError where error.code == .timedOut {
            throw .timeout("\(url.absoluteString) did not answer within \(timeout)")
        } catch {
            throw .driverError("POST \(url.absoluteString) failed: \(error.localizedDescription)")
        }
    }
}
