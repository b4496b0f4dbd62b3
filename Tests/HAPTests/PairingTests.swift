import Crypto
import Foundation
@testable import HAP
import Testing

/// Pair-setup, pair-verify, the encrypted session and the pairings endpoint, driven through
/// ``HAPConnection`` by an in-process controller.
@Suite struct PairingTests {
    static let identity = AccessoryIdentity(
        pairingID: "AA:BB:CC:DD:EE:01", signingKey: .init(), setupCode: "031-45-154", setupID: "HRTH")

    func make(_ store: MemoryPairingStore = MemoryPairingStore()) throws -> (PairingServer, FakeAccessories, HAPConnections) {
        (try PairingServer(identity: Self.identity, store: store), FakeAccessories(), HAPConnections())
    }

    @Test func pairSetupThenVerify_encryptedSessionReadsAccessories() async throws {
        let store = MemoryPairingStore()
        let (server, acc, conns) = try make(store)
        let c = TestController(server: server, handler: acc, connections: conns)
        let ltpk = try await c.pairSetup(code: "031-45-154").get()
        #expect(ltpk == Array(Self.identity.signingKey.publicKey.rawRepresentation))
        #expect(try store.loadPairings() == [Pairing(identifier: "controller-1", publicKey: Array(c.key.publicKey.rawRepresentation), isAdmin: true)])

        // A second connection verifies and reads /accessories over the encrypted framing.
        let v = TestController(server: server, handler: acc, connections: conns, identifier: "controller-1", key: c.key)
        #expect(await v.pairVerify(accessoryLTPK: ltpk, accessoryID: Self.identity.pairingID))
        let r = try #require(await v.request("GET", "/accessories"))
        #expect(r.status == 200)
        let json = try #require(r.json as? [String: Any])
        #expect((json["accessories"] as? [Any])?.count == 3)
        // Already paired: a new pair-setup is refused with Unavailable.
        let other = TestController(server: server, handler: acc, connections: conns, identifier: "intruder")
        #expect(await other.tlv("/pair-setup", TLV8([(.state, [1]), (.method, [0])]))?.byte(.error) == TLVError.unavailable.rawValue)
    }

    @Test func wrongSetupCode_isCountedThenMaxTries() async throws {
        let store = MemoryPairingStore()
        try store.saveFailedAttempts(PairingServer.maxAttempts - 2)
        let (server, acc, conns) = try make(store)
        let c = TestController(server: server, handler: acc, connections: conns)
        // A wrong proof (no need to know the code to send one).
        for expected in [PairingServer.maxAttempts - 1, PairingServer.maxAttempts] {
            let m2 = try #require(await c.tlv("/pair-setup", TLV8([(.state, [1]), (.method, [0])])))
            #expect(m2.byte(.state) == 2 && m2[.publicKey]?.count == 384 && m2[.salt]?.count == 16)
            let a = SRPClient<SHA512>(group: .rfc5054_3072, secret: [7, 7, 7]).publicKey
            let m4 = try #require(await c.tlv("/pair-setup", TLV8([(.state, [3]), (.publicKey, a), (.proof, [UInt8](repeating: 1, count: 64))])))
            #expect(m4.byte(.state) == 4)
            #expect(m4.byte(.error) == TLVError.authentication.rawValue)
            #expect(try store.loadFailedAttempts() == expected)
        }
        // The 100th failure reached: refused from M1 on, even with the right code.
        let m2 = try #require(await c.tlv("/pair-setup", TLV8([(.state, [1]), (.method, [0])])))
        #expect(m2.byte(.error) == TLVError.maxTries.rawValue)
        // It survives a restart (the count is in the store).
        let restarted = try PairingServer(identity: Self.identity, store: store)
        #expect(restarted.failedAttempts == PairingServer.maxAttempts)
    }

    @Test func secondControllerDuringSetup_isBusy_untilFirstDisconnects() async throws {
        let (server, acc, conns) = try make()
        let first = TestController(server: server, handler: acc, connections: conns)
        let second = TestController(server: server, handler: acc, connections: conns, identifier: "controller-2")
        #expect(await first.tlv("/pair-setup", TLV8([(.state, [1]), (.method, [0])]))?.byte(.error) == nil)
        #expect(await second.tlv("/pair-setup", TLV8([(.state, [1]), (.method, [0])]))?.byte(.error) == TLVError.busy.rawValue)
        // The first disconnects mid-setup: the setup is forgotten, the second may start.
        first.connection.closed(reason: "test disconnect")
        #expect(await second.tlv("/pair-setup", TLV8([(.state, [1]), (.method, [0])]))?.byte(.error) == nil)
        // M3 on a connection that never sent M1 is refused.
        #expect(await first.tlv("/pair-setup", TLV8([(.state, [3]), (.publicKey, [1]), (.proof, [1])]))?.byte(.error) == TLVError.unknown.rawValue)
    }

    @Test func malformedTLV_isRefusedAndNothingElseStops() async throws {
        let (server, acc, conns) = try make()
        let c = TestController(server: server, handler: acc, connections: conns)
        let r = try #require(await c.request("POST", "/pair-setup", body: [0x06, 0x05, 0x01]))
        #expect(r.tlv?.byte(.error) == TLVError.unknown.rawValue)
        let r2 = try #require(await c.request("POST", "/pair-verify", body: [0x03]))
        #expect(r2.tlv?.byte(.error) == TLVError.unknown.rawValue)
        // The same connection still works.
        #expect(await c.tlv("/pair-setup", TLV8([(.state, [1]), (.method, [0])]))?.byte(.state) == 2)
    }

    /// A controller already paired (in the store), for tests that need a verified session fast.
    static func verified(_ server: PairingServer, _ acc: FakeAccessories, _ conns: HAPConnections, store: MemoryPairingStore,
                         id: String = "admin", admin: Bool = true) async throws -> TestController {
        let c = TestController(server: server, handler: acc, connections: conns, identifier: id)
        try store.savePairing(Pairing(identifier: id, publicKey: Array(c.key.publicKey.rawRepresentation), isAdmin: admin))
        return c
    }

    @Test func pairVerify_unknownControllerRefused_knownAccepted() async throws {
        let store = MemoryPairingStore()
        let known = TestController(server: try PairingServer(identity: Self.identity, store: store), handler: FakeAccessories(), connections: HAPConnections(), identifier: "known")
        try store.savePairing(Pairing(identifier: "known", publicKey: Array(known.key.publicKey.rawRepresentation), isAdmin: true))
        let server = try PairingServer(identity: Self.identity, store: store)
        let acc = FakeAccessories()
        let conns = HAPConnections()
        let stranger = TestController(server: server, handler: acc, connections: conns, identifier: "stranger")
        #expect(await stranger.pairVerify(accessoryLTPK: Array(Self.identity.signingKey.publicKey.rawRepresentation), accessoryID: Self.identity.pairingID) == false)
        let ok = TestController(server: server, handler: acc, connections: conns, identifier: "known", key: known.key)
        #expect(await ok.pairVerify(accessoryLTPK: Array(Self.identity.signingKey.publicKey.rawRepresentation), accessoryID: Self.identity.pairingID))
        #expect(conns.sessionCount == 1)
    }

    @Test func pairings_addListRemove_withAdminBit() async throws {
        let store = MemoryPairingStore()
        let admin = TestController(server: try PairingServer(identity: Self.identity, store: store), handler: FakeAccessories(), connections: HAPConnections(), identifier: "admin")
        try store.savePairing(Pairing(identifier: "admin", publicKey: Array(admin.key.publicKey.rawRepresentation), isAdmin: true))
        let server = try PairingServer(identity: Self.identity, store: store)
        let acc = FakeAccessories()
        let conns = HAPConnections()
        let ltpk = Array(Self.identity.signingKey.publicKey.rawRepresentation)
        let a = TestController(server: server, handler: acc, connections: conns, identifier: "admin", key: admin.key)
        #expect(await a.pairVerify(accessoryLTPK: ltpk, accessoryID: Self.identity.pairingID))

        // Add a second iPhone user as a non-admin.
        let guestKey = Curve25519.Signing.PrivateKey()
        let add = try #require(await a.tlv("/pairings", TLV8([(.state, [1]), (.method, [3]), (.identifier, Array("guest".utf8)),
            (.publicKey, Array(guestKey.publicKey.rawRepresentation)), (.permissions, [0])])))
        #expect(add.byte(.state) == 2 && add.byte(.error) == nil)
        let list = try #require(await a.tlv("/pairings", TLV8([(.state, [1]), (.method, [5])])))
        let groups = list.groups()
        #expect(groups.count == 2)
        #expect(groups.map { $0.byte(.permissions) } == [1, 0])  // admin, guest (sorted by ID)
        // The guest verifies but may not manage pairings.
        let g = TestController(server: server, handler: acc, connections: conns, identifier: "guest", key: guestKey)
        #expect(await g.pairVerify(accessoryLTPK: ltpk, accessoryID: Self.identity.pairingID))
        #expect(await g.tlv("/pairings", TLV8([(.state, [1]), (.method, [5])]))?.byte(.error) == TLVError.authentication.rawValue)
        // Removing the guest closes its session.
        let remove = try #require(await a.tlv("/pairings", TLV8([(.state, [1]), (.method, [4]), (.identifier, Array("guest".utf8))])))
        #expect(remove.byte(.error) == nil)
        _ = await g.nextPushed()
        #expect(g.closedReason == "pairing removed")
        #expect(try store.loadPairings().map(\.identifier) == ["admin"])
        // Removing the admin itself: every pairing goes, the accessory is unpaired again.
        _ = await a.tlv("/pairings", TLV8([(.state, [1]), (.method, [4]), (.identifier, Array("admin".utf8))]))
        #expect(a.closedReason == "own pairing removed")
        #expect(!server.isPaired)
        #expect(try store.loadPairings().isEmpty)
    }
}
