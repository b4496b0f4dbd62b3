import DriverAPI
import Foundation
import HAP
@testable import HAPBridge
import HomeCore
import HomeModel
import Synchronization
import Testing

/// Records what the bridges would publish through avahi, per bridge name.
final class RecordingAdvertiser: HAPAdvertising {
    let records = Mutex<[(name: String, port: Int, txt: [String: String])]>([])

    func publish(name: String, port: Int, txt: [(String, String)]) {
        records.withLock { $0.append((name, port, Dictionary(txt, uniquingKeysWith: { $1 }))) }
    }

    func stop() {}

    func published(_ name: String) -> [[String: String]] { records.withLock { $0.filter { $0.name == name }.map(\.txt) } }
}

enum BridgeFixtures {
    static func relay(_ n: Int) -> DeviceDescription {
        DeviceDescription(
            localID: "relay-\(n)", name: "Relay \(n)",
            types: [
                DeviceTypeDescription(
                    id: OnOffPlugInUnitDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)]])
            ], commission: CommissionHint(name: "Relay \(n)", room: "Garage"))
    }

    static func stateDir() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hap-bridge-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Polls `condition` every 20 ms for at most `seconds`.
    static func wait(_ seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    static func configuration(advertise: Bool = true) -> HAPBridge.Configuration {
        .init(host: "127.0.0.1", port: 0, name: "Hearth Test", setupCode: "031-45-154", advertise: advertise)
    }
}

@Suite(.serialized) struct HAPBridgeRunTests {
    /// Runs one bridge on `path` until `body` returns.
    func withBridge<T>(
        core: HomeCore, path: String, advertiser: RecordingAdvertiser, _ body: (HAPBridge) async throws -> T
    ) async throws -> T {
        let bridge = try HAPBridge(
            core: core, settings: try ExposureSettings(store: nil), store: try HAPStateStore(path: path), configuration: BridgeFixtures.configuration(),
            advertiser: advertiser)
        let task = Task { try await bridge.run() }
        defer { task.cancel() }
        _ = await bridge.listeningPort()
        let result = try await body(bridge)
        task.cancel()
        _ = try? await task.value
        return result
    }

    @Test func configurationNumber_keptAcrossRestarts_bumpedOnlyWhenTheLayoutChanges() async throws {
        let dir = BridgeFixtures.stateDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/hap.sqlite"
        let core = HomeCore()
        let driver = core.context(for: "gpio")
        for n in 1...3 { driver.publish(BridgeFixtures.relay(n)) }
        let first = RecordingAdvertiser()
        let c1 = try await withBridge(core: core, path: path, advertiser: first) { bridge in
            #expect(await BridgeFixtures.wait { bridge.database.accessories.count == 4 && !first.published("Hearth Test").isEmpty })
            return bridge.configurationNumber
        }
        // Every restart: the same c#, advertised once, never an intermediate number.
        for _ in 0..<2 {
            let again = RecordingAdvertiser()
            let c = try await withBridge(core: core, path: path, advertiser: again) { bridge in
                #expect(await BridgeFixtures.wait { !again.published("Hearth Test").isEmpty })
                // A state change is no layout change.
                driver.report("relay-1", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
                try await Task.sleep(for: .milliseconds(200))
                return bridge.configurationNumber
            }
            #expect(c == c1)
            #expect(again.published("Hearth Test").map { $0["c#"] } == [String(c1)])
        }
        // A new device: one bump, re-advertised, and kept across the next restart.
        let grown = RecordingAdvertiser()
        let c2 = try await withBridge(core: core, path: path, advertiser: grown) { bridge in
            #expect(await BridgeFixtures.wait { !grown.published("Hearth Test").isEmpty })
            driver.publish(BridgeFixtures.relay(4))
            #expect(await BridgeFixtures.wait { bridge.database.accessories.count == 5 })
            #expect(await BridgeFixtures.wait { grown.published("Hearth Test").last?["c#"] == String(c1 + 1) })
            return bridge.configurationNumber
        }
        #expect(c2 == c1 + 1)
        #expect(grown.published("Hearth Test").map { $0["c#"] } == [String(c1), String(c1 + 1)])
        let after = RecordingAdvertiser()
        let c3 = try await withBridge(core: core, path: path, advertiser: after) { bridge in
            #expect(await BridgeFixtures.wait { !after.published("Hearth Test").isEmpty })
            return bridge.configurationNumber
        }
        #expect(c3 == c2)
        #expect(try HAPStateStore(path: path).currentConfigurationNumber() == c2)
    }

    @Test func pairingChanges_reAdvertiseStatusFlag_whenTheyHappen() async throws {
        let dir = BridgeFixtures.stateDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/hap.sqlite"
        let store = try HAPStateStore(path: path)
        _ = try store.identity(setupCode: "031-45-154")
        try store.savePairing(Pairing(identifier: "iphone-1", publicKey: Array(repeating: 7, count: 32), isAdmin: true))
        let core = HomeCore()
        core.context(for: "gpio").publish(BridgeFixtures.relay(1))
        let advertiser = RecordingAdvertiser()
        try await withBridge(core: core, path: path, advertiser: advertiser) { bridge in
            #expect(await BridgeFixtures.wait { advertiser.published("Hearth Test").last?["sf"] == "0" })
            let before = advertiser.published("Hearth Test").count
            let start = ContinuousClock.now
            #expect(bridge.unpairAll() == ["iphone-1"])
            #expect(await BridgeFixtures.wait(5) { advertiser.published("Hearth Test").last?["sf"] == "1" })
            let took = ContinuousClock.now - start
            // One new record, nothing else re-published meanwhile.
            #expect(advertiser.published("Hearth Test").count == before + 1)
            #expect(took < .seconds(5))
            #expect(bridge.status.pairings.isEmpty)
            let saved = try HAPStateStore(path: path).loadPairings()
            #expect(saved.isEmpty)
        }
    }

    @Test func over149Devices_aSecondBridge_ownIdentityPortAndName_placementKeptAcrossRestarts() async throws {
        let dir = BridgeFixtures.stateDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/hap.sqlite"
        let core = HomeCore()
        let driver = core.context(for: "gpio")
        for n in 1...160 { driver.publish(BridgeFixtures.relay(n)) }

        func run<T>(_ advertiser: RecordingAdvertiser, _ body: (HAPBridgeGroup) async throws -> T) async throws -> T {
            let group = try HAPBridgeGroup(
                core: core, settings: try ExposureSettings(store: nil), statePath: path, configuration: BridgeFixtures.configuration(), advertiser: advertiser)
            let task = Task { try await group.run() }
            defer { task.cancel() }
            let result = try await body(group)
            task.cancel()
            _ = try? await task.value
            return result
        }
        func placement(_ group: HAPBridgeGroup) -> [[String]] {
            group.bridges.map { b in b.state.withLock { s in s.accessories.values.compactMap { $0.device?.id.rawValue }.sorted() } }
        }

        let advertiser = RecordingAdvertiser()
        let (before, identities) = try await run(advertiser) { group in
            #expect(await BridgeFixtures.wait(60) {
                group.bridges.count == 2 && group.bridges[0].database.accessories.count == 150 && group.bridges[1].database.accessories.count == 12
            })
            let bridges = group.bridges
            #expect(bridges.map(\.configuration.name) == ["Hearth Test", "Hearth Test 2"])
            #expect(bridges[0].identity.pairingID != bridges[1].identity.pairingID)
            #expect(bridges[0].identity.setupCode == "031-45-154" && bridges[1].identity.setupCode != "031-45-154")
            #expect(AccessoryIdentity.isAllowedSetupCode(bridges[1].identity.setupCode))
            let ports = await [bridges[0].listeningPort(), bridges[1].listeningPort()]
            #expect(ports[0] != ports[1])
            #expect(await BridgeFixtures.wait { advertiser.published("Hearth Test 2").last?["id"] == bridges[1].identity.pairingID })
            #expect(bridges[0].refusedDevices.isEmpty && bridges[1].refusedDevices.isEmpty)
            #expect(FileManager.default.fileExists(atPath: dir + "/hap-2.sqlite"))
            return (placement(group), bridges.map(\.identity.pairingID))
        }
        #expect(before.map(\.count) == [149, 11])

        // Restart: the same devices on the same bridges, the same identities.
        try await run(RecordingAdvertiser()) { group in
            #expect(await BridgeFixtures.wait(60) {
                group.bridges.count == 2 && group.bridges[0].database.accessories.count == 150 && group.bridges[1].database.accessories.count == 12
            })
            #expect(placement(group) == before)
            #expect(group.bridges.map(\.identity.pairingID) == identities)
            // A new device: the first bridge is full, so it joins the second.
            driver.publish(BridgeFixtures.relay(161))
            #expect(await BridgeFixtures.wait(30) { group.bridges[1].database.accessories.count == 13 })
            #expect(placement(group)[0] == before[0])
        }
    }
}
