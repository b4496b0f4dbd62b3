import Foundation
import HAP
import HAPBridge
import HearthAPI
import HearthServer
import HomeCore
import HomeModel
import Testing

/// The HomeKit bridges as hearthd wires them (`HAPBridgeGroup.wireBridges`, `unpair(bridge:)`).
struct GroupAdministration: HAPAdministration {
    let group: HAPBridgeGroup
    func hapBridges() -> [WireHAPBridge] { group.wireBridges() }
    func unpair(bridge number: Int) throws(HomeError) -> [String] { try group.unpair(bridge: number) }
}

/// `/hap` over real HTTP with a real bridge group and its SQLite state: admins see the setup
/// code and QR code and unpair; members cannot.
@Suite struct HAPRoutesTests {
    @Test func adminsSeeTheSetupCodeAndQR_andUnpair_membersCannot() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hap-routes-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/hap.sqlite"
        let store = try HAPStateStore(path: state)
        _ = try store.identity(setupCode: "031-45-154")
        try store.savePairing(Pairing(identifier: "iphone-1", publicKey: Array(repeating: 1, count: 32), isAdmin: true))
        try store.savePairing(Pairing(identifier: "iphone-2", publicKey: Array(repeating: 2, count: 32), isAdmin: false))
        let settings = try ExposureSettings(store: nil)
        try await TestHome.with(exposure: settings, hap: { core in
            GroupAdministration(group: try HAPBridgeGroup(
                core: core, settings: settings, statePath: state, configuration: .init(host: "127.0.0.1", port: 0, name: "Hearth", setupCode: "031-45-154", advertise: false)))
        }) { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            #expect(try await home.call("GET", "hap", token: member).status == 403)
            #expect(try await home.call("DELETE", "hap/bridges/1/pairings", token: member).status == 403)

            let first = try await home.call("GET", "hap", token: admin)
            #expect(first.status == 200, "\(first.text)")
            let hap = try JSONDecoder().decode(WireHAP.self, from: Data(first.text.utf8))
            let bridge = try #require(hap.bridges.first)
            #expect(hap.bridges.count == 1 && bridge.number == 1 && bridge.name == "Hearth")
            #expect(bridge.setupCode == "031-45-154" && bridge.setupURI.hasPrefix("X-HM://"))
            #expect(bridge.setupQR == (try QRCode(bridge.setupURI, level: .medium)).rows && bridge.setupQR.count == 25)
            #expect(bridge.pairings == [WireHAPPairing(identifier: "iphone-1", admin: true), WireHAPPairing(identifier: "iphone-2", admin: false)])

            #expect(try await home.call("DELETE", "hap/bridges/2/pairings", token: admin).status == 404)
            #expect(try await home.call("DELETE", "hap/bridges/x/pairings", token: admin).status == 400)
            let unpaired = try await home.call("DELETE", "hap/bridges/1/pairings", token: admin)
            #expect(unpaired.status == 200, "\(unpaired.text)")
            #expect(try JSONDecoder().decode(WireHAP.self, from: Data(unpaired.text.utf8)).bridges.first?.pairings == [])
            let saved = try HAPStateStore(path: state).loadPairings()
            #expect(saved.isEmpty)
        }
    }

    @Test func withoutTheBridgeTheRoutesSayNotFound() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let reply = try await home.call("GET", "hap", token: admin)
            #expect(reply.status == 404)
        }
    }
}
