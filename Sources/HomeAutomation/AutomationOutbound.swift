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

/// The outlets hearthd gives the engine: webhooks through `webhooks` (``WebhookLibrary``, loaded
/// at the first webhook), MQTT through `publisher` (hearthd's connection to the home's broker;
/// nil: `publish` steps fail with `unsupportedOperation`).
public struct StandardOutbound: AutomationOutbound {
    public typealias Publisher = @Sendable (_ topic: String, _ payload: [UInt8], _ retain: Bool) async throws(HomeError) -> Void
    let publisher: Publisher?
    let webhooks: WebhookLibrary

    public init(publisher: Publisher? = nil, webhooks: WebhookLibrary = .standard) {
        self.publisher = publisher
        self.webhooks = webhooks
    }

    public func publish(topic: String, payload: [UInt8], retain: Bool) async throws(HomeError) {
        guard let publisher else { throw .unsupportedOperation("no MQTT broker is configured for automations (plugins.mqtt.broker)") }
        try await publisher(topic, payload, retain)
    }

    public func post(url: URL, body: Data, timeout: Duration) async throws(HomeError) -> Int {
        try await webhooks.post(url: url, body: body, timeout: timeout)
    }
}
