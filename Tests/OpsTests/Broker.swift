import TestSupport

/// The shared ``MosquittoBroker`` under the names OpsTests use: `Broker()`, `Broker(users:)`,
/// `broker.port`, `Broker.freeLoopbackPort()`.
///
/// A type of this module rather than a typealias, so its members need no `import TestSupport`
/// in every file that uses them (MemberImportVisibility).
struct Broker: Sendable {
    let mosquitto: MosquittoBroker
    var port: Int { mosquitto.port }

    /// A broker on a free loopback port; with `users`, only they may connect.
    init(users: [String: String] = [:]) async throws { mosquitto = try await MosquittoBroker(users: users) }

    static func freeLoopbackPort() throws -> Int { try MosquittoBroker.freeLoopbackPort() }
}
