import DriverAPI
import Foundation
import HashTreeCollections
import HomeCore
import HomeModel
import Logging
@testable import MQTTExport
import PluginHost
import Synchronization
import TestSupport
import Testing

/// Discovery of many devices, and the per-change path, counted in effects (the state machine)
/// and seen end to end (1,100 devices through a real mosquitto into the real `libMQTTPlugin.so`,
/// more than its default of 1,024 kept devices). Bounds are generous: these catch what cannot
/// finish, not what is slow.
@Suite(.serialized) struct ExportScalingTests {
    static let topics = ExportFixtures.topics

    static func contact(_ i: Int, open: Bool = false) -> DeviceDescription {
        DeviceDescription(
            localID: "contact-\(i)", name: "Contact \(i)",
            types: [
                DeviceTypeDescription(
                    id: ContactSensorDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], BooleanStateTrait.identifier: [BooleanStateTrait.Attribute.stateValue: .bool(!open)]])
            ], commission: CommissionHint(name: "Contact \(i)", room: "Garage"))
    }

    /// A core with `n` commissioned contact sensors of plugin `gpio`.
    static func contacts(_ n: Int) -> (HomeCore, any DriverContext) {
        let core = HomeCore()
        let driver = core.context(for: "gpio")
        for i in 0..<n { driver.publish(contact(i)) }
        return (core, driver)
    }

    static func publishes(_ effects: [ExportStateMachine.Effect]) -> [(topic: String, payload: [UInt8])] {
        effects.compactMap { if case .publish(let t, let p, _) = $0 { (t, p) } else { nil } }
    }

    @Test func aSetOfAThousandDevicesGoesOutOnceAndEachChangeCostsOneMessage() throws {
        let n = 1000
        let (core, driver) = Self.contacts(n)
        let devices = ExportPolicyHelper.exposed(core)
        try #require(devices.count == n)
        var m = ExportStateMachine(mapper: ExportMapper(topics: Self.topics))
        #expect(m.devices(devices).isEmpty, "nothing before the broker connects")
        let first = Self.publishes(m.connectedToBroker())
        // Each device once: its config, availability and state; and the bridge's config and availability.
        #expect(first.filter { $0.topic.hasSuffix("/config") }.count == n + 1)
        #expect(first.count == 3 * n + 2)
        #expect(Set(first.map(\.topic)).count == first.count, "no topic twice")

        // The same set again (what a second batched set or a stream resync delivers): nothing.
        #expect(m.devices(devices).isEmpty)
        // Every device unchanged, one by one (a session's first state batch): nothing.
        #expect(devices.flatMap { m.device($0.id, $0) }.isEmpty)

        // One sensor opens: one state message, for it.
        driver.report("contact-7", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(false))
        let opened = try #require(ExportPolicyHelper.exposed(core).first { $0.id == "gpio:contact-7" })
        let slug = ExportTopics.slug("gpio:contact-7")
        let change = Self.publishes(m.device(opened.id, opened))
        #expect(change.map(\.topic) == [Self.topics.state(slug)])
        #expect(ExportFixtures.json(change.first?.payload ?? [])["contact"] as? String == "ON")
        #expect(m.updated(opened).isEmpty, "the same state again is not a change")

        // One sensor leaves: its config, state and availability are cleared, nothing else.
        let left = Self.publishes(m.device("gpio:contact-9", nil))
        let gone = ExportTopics.slug("gpio:contact-9")
        #expect(left.count == 3 && left.allSatisfy { $0.payload.isEmpty && $0.topic.contains(gone) })
        #expect(m.exported.count == n - 1 && !m.configTopics.contains { $0.contains(gone) })
        // A retained config of the departed one is now stale; the others are ours.
        #expect(m.message(topic: Self.topics.config("binary_sensor", "\(gone)_contact"), payload: Array("{}".utf8), retained: true).count == 1)
        #expect(m.message(topic: Self.topics.config("binary_sensor", "\(slug)_contact"), payload: Array("{}".utf8), retained: true).isEmpty)
    }

    /// 1,100 sensors exported through a real broker and imported by the real MQTT plugin with
    /// `discovery.maximumDevices` raised (its default of 1,024 would refuse the last 76, and the
    /// importer could never have them all); then one sensor's change crosses in one message.
    @Test func elevenHundredDevicesAreExportedAndImportedThroughARealBroker() async throws {
        let n = 1100
        let broker = try await MosquittoBroker()
        defer { broker.stop() }
        let (core, driver) = Self.contacts(n)
        let watcher = try await Watcher(port: broker.port, subscribe: ["homeassistant/binary_sensor/hearth_a/+/config"])
        defer { watcher.stop() }
        let exporter = MQTTExporter(core: core, settings: try ExposureSettings(store: nil), configuration: .init(port: broker.port, nodeID: "hearth_a"))
        let run = Task { try await exporter.run() }
        defer { run.cancel() }
        let importer = HomeCore()
        let loaded = try PluginLoader.load(FederationTests.library)
        let value: Value = [
            "broker": ["host": "127.0.0.1", "port": .int(Int64(broker.port)), "clientID": "scale-import"],
            "discovery": ["maximumDevices": 2000, "maximumEntities": 4096],
        ]
        let service = PluginService(
            loaded, core: importer, configuration: PluginConfiguration(value: value, file: "hearth.yaml", keyPath: "plugins.mqtt"),
            clock: ContinuousClock(), logger: Logger(label: "test.import"))
        let importing = Task { try await service.run() }
        defer { importing.cancel() }

        try await within(60, "\(n) configs on the broker") {
            await watcher.until { seen in seen.count { $0.key.contains("gpio_contact-") && !$0.value.isEmpty } >= n }
        }
        let discovered = try await within(60, "\(n) devices discovered by the importer") { () async throws -> [DeviceSnapshot] in
            for await set in importer.home(for: .system).discoveredDevices().batched() {
                let contacts = set.filter { $0.name.hasPrefix("Contact ") }
                if contacts.count >= n { return contacts.map(\.snapshot) }
            }
            return []
        }
        #expect(discovered.count == n)

        // One sensor opens on the exporter: the importer has it, from its state topic.
        let id = try #require(discovered.first { $0.name == "Contact 1042" }?.id)
        driver.report("contact-1042", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(false))
        try await within(30, "Contact 1042 open on the importer") {
            while importer.state.devices[id]?.types.first?.traits[BooleanStateTrait.identifier]?[BooleanStateTrait.Attribute.stateValue]?.boolValue != false {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(exporter.exportedDevices.count == n)
    }
}
