import DriverAPI
import Foundation
import HearthConfiguration
import HomeAutomation
import HomeModel
import Logging
import MQTTExport
import ServiceLifecycle
import Synchronization

/// The automations' MQTT connection (`publish` actions): to the broker of `plugins.mqtt.broker`
/// (host, port, username, password), with its own client ID; connected in the background and
/// reconnected by libmosquitto. Webhooks need nothing set up ([StandardOutbound]).
final class AutomationBroker: Service, Sendable {
    let client: MosquittoClient
    let connected = Mutex(false)
    let logger: Logger

    /// The broker from the MQTT plugin's section, or nil when the plugin is off or has none.
    static func make(_ plugins: HearthConfig.Plugins, logger: Logger) -> AutomationBroker? {
        guard !plugins.disabled.contains("mqtt"), let section = plugins.sections["mqtt"]?.value.objectValue,
            section["enabled"]?.boolValue != false, let broker = section["broker"]?.objectValue
        else { return nil }
        let host = broker["host"]?.stringValue ?? "127.0.0.1"
        let port = broker["port"]?.intValue.map(Int.init) ?? 1883
        let id = (broker["clientID"]?.stringValue ?? "hearth") + "-automations"
        do {
            let client = try MosquittoClient(
                .init(host: host, port: port, clientID: id, username: broker["username"]?.stringValue, password: broker["password"]?.stringValue))
            return AutomationBroker(client: client, logger: logger)
        } catch {
            logger.error("automations cannot publish to MQTT: \(error)")
            return nil
        }
    }

    init(client: MosquittoClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    func publish(_ topic: String, _ payload: [UInt8], _ retain: Bool) throws(HomeError) {
        guard connected.withLock({ $0 }), client.publish(topic, payload, retain: retain) else {
            throw .deviceOffline("the MQTT broker for automations is not connected")
        }
    }

    func run() async throws {
        let first = (try? client.start()) ?? false
        await cancelWhenGracefulShutdown {
            var reached = first
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in self.client.events {
                        switch event {
                        case .connected: self.connected.withLock { $0 = true }
                        case .disconnected: self.connected.withLock { $0 = false }
                        case .message: break
                        }
                    }
                }
                // A broker that was down at start: try again every 2 s until a first attempt is under way.
                while !reached, !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(2))
                    reached = self.client.retry()
                }
                await group.next()
            }
        }
        await client.stop()
        client.continuation.finish()
    }
}
