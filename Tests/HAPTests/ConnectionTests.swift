import Crypto
import Foundation
@testable import HAP
import Synchronization
import Testing

/// Requests over a verified session: /accessories, /characteristics, events, timed writes,
/// /identify, and what is refused.
@Suite struct ConnectionTests {
    let store = MemoryPairingStore()
    let acc = FakeAccessories()
    let conns = HAPConnections()
    let server: PairingServer
    let controller: TestController

    init() async throws {
        let key = Curve25519.Signing.PrivateKey()
        try store.savePairing(Pairing(identifier: "admin", publicKey: Array(key.publicKey.rawRepresentation), isAdmin: true))
        server = try PairingServer(identity: PairingTests.identity, store: store)
        controller = TestController(server: server, handler: acc, connections: conns, identifier: "admin", key: key)
    }

    func verify(_ c: TestController) async -> Bool {
        await c.pairVerify(accessoryLTPK: Array(PairingTests.identity.signingKey.publicKey.rawRepresentation), accessoryID: PairingTests.identity.pairingID)
    }

    @Test func beforePairVerify_accessoriesAnswers470() async throws {
        let r = try #require(await controller.request("GET", "/accessories"))
        #expect(r.status == 470)
        #expect(await controller.request("GET", "/characteristics?id=2.9")?.status == 470)
    }

    @Test func unencryptedRequestAfterVerify_closesConnection() async throws {
        #expect(await verify(controller))
        await controller.sendRaw(Array("GET /accessories HTTP/1.1\r\n\r\n".utf8), encrypt: false)
        #expect(controller.closedReason?.contains("at most 1024") == true)
    }

    @Test func oversizedFrame_closesConnection() async throws {
        #expect(await verify(controller))
        await controller.sendRaw([0x01, 0x04] + [UInt8](repeating: 0, count: 1025 + 16), encrypt: false)  // length 1025
        #expect(controller.closedReason?.contains("1025") == true)
    }

    @Test func tamperedFrame_closesConnection() async throws {
        #expect(await verify(controller))
        var f = controller.framing!
        var sealed = f.seal(Array("GET /accessories HTTP/1.1\r\n\r\n".utf8))
        sealed[5] ^= 1
        await controller.sendRaw(sealed, encrypt: false)
        #expect(controller.closedReason?.contains("does not authenticate") == true)
    }

    @Test func largeResponse_isSplitInto1024ByteFrames() async throws {
        #expect(await verify(controller))
        var many: [HAPAccessory] = []
        for aid in 1...40 {
            many.append(HAPAccessory(aid: aid, services: [HAPService(iid: 1, type: "3E", characteristics: [
                HAPCharacteristic(iid: 2, type: "23", format: .string, perms: ["pr"], value: .string("Accessory number \(aid)")),
            ])]))
        }
        acc.db.withLock { $0 = AccessoryDatabase(many) }
        let r = try #require(await controller.request("GET", "/accessories"))
        #expect(r.body.count > 2048)
        #expect(controller.accessoryFraming!.sent > 3)  // M4 was plain; then several frames
        let json = try #require(r.json as? [String: Any])
        #expect((json["accessories"] as? [Any])?.count == 40)
    }

    @Test func readCharacteristics_valuesAndUnreachable() async throws {
        #expect(await verify(controller))
        let ok = try #require(await controller.request("GET", "/characteristics?id=2.9,2.10&meta=1"))
        #expect(ok.status == 200)
        let items = try #require((ok.json as? [String: Any])?["characteristics"] as? [[String: Any]])
        #expect(items.count == 2)
        #expect(items[1]["value"] as? Int == 50)
        #expect(items[1]["maxValue"] as? Int == 100)
        // The offline sensor: -70402, no stale value; an unknown ID: -70409.
        let mixed = try #require(await controller.request("GET", "/characteristics?id=3.9,9.9,2.9"))
        #expect(mixed.status == 207)
        let m = try #require((mixed.json as? [String: Any])?["characteristics"] as? [[String: Any]])
        #expect(m.map { $0["status"] as? Int } == [-70402, -70409, 0])
        #expect(m[0]["value"] == nil)
    }

    @Test func writeAndSubscribe_eventsReachOtherSubscribers() async throws {
        #expect(await verify(controller))
        let ok = try #require(await controller.request("PUT", "/characteristics",
            body: Array(#"{"characteristics":[{"aid":2,"iid":9,"value":true},{"aid":2,"iid":10,"value":75}]}"#.utf8)))
        #expect(ok.status == 204)
        #expect(acc.writes.withLock { $0.map { "\($0.0)=\($0.1)" } } == ["2.9=true", "2.10=75"])
        // Out of range, read-only, unknown: 207 with each status.
        let bad = try #require(await controller.request("PUT", "/characteristics",
            body: Array(#"{"characteristics":[{"aid":2,"iid":10,"value":101},{"aid":1,"iid":3,"value":"x"},{"aid":7,"iid":1,"value":1}]}"#.utf8)))
        #expect(bad.status == 207)
        let statuses = ((bad.json as? [String: Any])?["characteristics"] as? [[String: Any]])?.map { $0["status"] as? Int }
        #expect(statuses == [-70410, -70404, -70409])
        // Subscribe, then a change pushed by the bridge arrives as EVENT/1.0.
        let sub = try #require(await controller.request("PUT", "/characteristics", body: Array(#"{"characteristics":[{"aid":2,"iid":9,"ev":true}]}"#.utf8)))
        #expect(sub.status == 204)
        let noEv = try #require(await controller.request("PUT", "/characteristics", body: Array(#"{"characteristics":[{"aid":1,"iid":3,"ev":true}]}"#.utf8)))
        #expect(noEv.status == 207)
        conns.notify([(CharacteristicID(aid: 2, iid: 9), .bool(true)), (CharacteristicID(aid: 2, iid: 10), .int(3))])
        let event = try #require(await controller.nextPushed())
        #expect(event.event)
        let changed = try #require((event.json as? [String: Any])?["characteristics"] as? [[String: Any]])
        #expect(changed.count == 1)  // only the subscribed one
        #expect(changed[0]["iid"] as? Int == 9 && changed[0]["value"] as? Bool == true)
    }

    @Test func timedWrite_needsPrepareWithinTTL() async throws {
        let clock = ManualInstant()
        let c = TestController(server: server, handler: acc, connections: conns, identifier: "admin", key: controller.key, now: { clock.now })
        #expect(await verify(c))
        // A "tw" characteristic written without /prepare: refused.
        let direct = try #require(await c.request("PUT", "/characteristics", body: Array(#"{"characteristics":[{"aid":2,"iid":11,"value":0}]}"#.utf8)))
        #expect(direct.status == 207)
        let prep = try #require(await c.request("PUT", "/prepare", body: Array(#"{"ttl":2500,"pid":42}"#.utf8)))
        #expect((prep.json as? [String: Any])?["status"] as? Int == 0)
        let ok = try #require(await c.request("PUT", "/characteristics", body: Array(#"{"characteristics":[{"aid":2,"iid":11,"value":0}],"pid":42}"#.utf8)))
        #expect(ok.status == 204)
        // Expired TTL: refused.
        _ = await c.request("PUT", "/prepare", body: Array(#"{"ttl":100,"pid":43}"#.utf8))
        clock.advance(.milliseconds(101))
        let late = try #require(await c.request("PUT", "/characteristics", body: Array(#"{"characteristics":[{"aid":2,"iid":11,"value":1}],"pid":43}"#.utf8)))
        #expect(late.status == 207)
        #expect(acc.writes.withLock { $0.map { "\($0.0)=\($0.1)" } } == ["2.11=0"])
    }

    @Test func identify_onlyWhileUnpaired() async throws {
        #expect(await controller.request("POST", "/identify")?.status == 400)
        let fresh = try PairingServer(identity: PairingTests.identity, store: MemoryPairingStore())
        let c = TestController(server: fresh, handler: acc, connections: conns)
        #expect(await c.request("POST", "/identify")?.status == 204)
        #expect(acc.identified.load(ordering: .relaxed) == 1)
    }

    @Test func malformedHTTP_answers400AndCloses() async throws {
        await controller.sendRaw(Array("NONSENSE\r\n\r\n".utf8))
        #expect(controller.nextResponse()?.status == 400)
        #expect(controller.closedReason != nil)
    }
}

/// A settable instant for timed-write deadlines (no sleeping in tests).
final class ManualInstant: @unchecked Sendable {
    // Guarded by `lock`.
    let lock = NSLock()
    var offset: Duration = .zero
    let start = ContinuousClock.now
    var now: ContinuousClock.Instant { lock.withLock { start.advanced(by: offset) } }
    func advance(_ d: Duration) { lock.withLock { offset += d } }
}
