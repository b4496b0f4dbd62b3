import Foundation
import GRDB
import HomeStorage
import MatterCommissioning
import MatterSecurity
import Testing

/// MatterStateStore on a real SQLite file in a temporary folder.
@Suite struct MatterStateStoreTests {
    let folder: String
    let path: String

    init() throws {
        folder = NSTemporaryDirectory() + "matter-store-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        path = folder + "/hearth.sqlite"
    }

    func open() throws -> (HearthDatabase, MatterStateStore) {
        let db = try HearthDatabase(path: path, extraMigrations: MatterStateStore.registerMigrations(in:))
        return (db, try db.matterStore())
    }

    func node(_ store: MatterStateStore) throws -> CommissioningNode {
        try CommissioningNode(store: store, attestation: Fixture.attestation)
    }

    /// The commissioner's side of AddNOC through the node (each step persisted).
    func commission(_ node: CommissioningNode, authority: TestAuthority, session: SessionInfo = Fixture.pase) throws -> NOCResponse {
        let now = ContinuousClock.now
        _ = try node.run { (s: inout CommissioningState) throws(CommissioningError) in
            s.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 1, session: session, now: now)
        }
        let csr = try node.run { (s: inout CommissioningState) throws(CommissioningError) in try s.csrResponse(nonce: Fixture.nonce, session: session) }
        let root = try authority.rootTLV, icac = try authority.icacTLV
        let noc = try authority.noc(for: try TestAuthority.csrKey(csr.result.elements), nodeID: 0x1001)
        _ = try node.run { (s: inout CommissioningState) throws(CommissioningError) in try s.addTrustedRootCertificate(root) }
        return try node.run { (s: inout CommissioningState) throws(CommissioningError) in
            try s.addNOC(noc: noc, icac: icac, ipk: Fixture.ipk, caseAdminSubject: Fixture.adminNode, adminVendorID: 0xFFF1, session: session)
        }.result
    }

    @Test func committedFabricSurvivesReopen_withKeysAndACL_inA0600File() throws {
        let authority = try TestAuthority()
        do {
            let (db, store) = try open()
            let node = try node(store)
            #expect(try commission(node, authority: authority).statusCode == .ok)
            let caseSession = Fixture.caseSession(fabric: 1)
            let (_, events) = try node.run { (s: inout CommissioningState) throws(CommissioningError) in s.commissioningComplete(session: caseSession) }
            #expect(events == [.commissioningCompleted(1)])
            _ = try node.run { (s: inout CommissioningState) throws(CommissioningError) in
                try s.setAccessControlEntries(
                    [AccessControlEntry(privilege: .administer, authMode: .case, subjects: [Fixture.adminNode], fabricIndex: 1),
                     AccessControlEntry(privilege: .operate, authMode: .case, subjects: [0xFFFF_FFFD_0001_0002],
                                        targets: [AccessControlTarget(cluster: 6, endpoint: 3), AccessControlTarget(deviceType: 0x100)], fabricIndex: 1)],
                    fabric: 1)
                return try s.updateFabricLabel("Home", session: caseSession)
            }
            try db.pool.close()
        }
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let (_, store) = try open()
        let reopened = try node(store).snapshot
        let fabric = try #require(reopened.fabrics[1])
        #expect(fabric.fabricID == 0x2026 && fabric.nodeID == 0x1001 && fabric.label == "Home" && fabric.epochIPK == Fixture.ipk)
        #expect(fabric.rootPublicKey == authority.root.publicKey)
        // The operational key that came back is the one the NOC certifies: CASE credentials load.
        let credentials = try fabric.credentials(), noc = try MatterCertificate(tlv: fabric.noc)
        #expect(credentials.noc.publicKey == noc.publicKey)
        #expect(reopened.accessControl.count == 2)
        #expect(reopened.accessControl[1].targets == [AccessControlTarget(cluster: 6, endpoint: 3), AccessControlTarget(deviceType: 0x100)])
        #expect(reopened.accessControl[1].subjects == [0xFFFF_FFFD_0001_0002])
        let saved = try store.loadCommissioning()
        #expect(reopened.failSafe == nil && saved.pendingRollback == nil)
    }

    @Test func failSafeExpiry_rollsBackWhatWasPersisted() throws {
        let (_, store) = try open()
        let node = try node(store)
        #expect(try commission(node, authority: try TestAuthority()).statusCode == .ok)
        // AddNOC is on disk, marked for rollback.
        let pending = try store.loadCommissioning()
        #expect(pending.fabrics.count == 1 && pending.accessControl.count == 1 && pending.pendingRollback?.addedFabric == 1)
        let (_, events) = try node.run { (s: inout CommissioningState) throws(CommissioningError) in s.tick(now: .now + .seconds(61)) }
        #expect(events.contains(.fabricRemoved(1)))
        #expect(try store.loadCommissioning() == PersistentCommissioning())
    }

    @Test func restartWithArmedFailSafe_rollsBackOnLoad() throws {
        do {
            let (db, store) = try open()
            #expect(try commission(try node(store), authority: try TestAuthority()).statusCode == .ok)
            try db.pool.close()
        }
        let (_, store) = try open()
        #expect(try store.loadCommissioning().pendingRollback != nil)
        let node = try node(store)  // as hearthd does on start: the clean-up runs and is saved
        #expect(node.snapshot.fabrics.fabrics.isEmpty)
        #expect(try store.loadCommissioning() == PersistentCommissioning())
    }

    @Test func counterPersistsAheadOfUse_andNeverRepeatsAfterRestart() throws {
        var used: [UInt32] = []
        do {
            let (db, store) = try open()
            let (resumed, first) = PersistedCounter.resume(stored: try store.loadCounter("group"), initial: 0xFFFF_FF00, window: 100)
            try store.saveCounter("group", first)
            var counter = resumed
            for _ in 0..<300 {
                let (value, persist) = counter.take()
                if let persist { try store.saveCounter("group", persist) }
                used.append(value)
            }
            try db.pool.close()
        }
        #expect(used.contains(0) && used.contains(0xFFFF_FFFF))  // wrapped
        let (_, store) = try open()
        var (after, _) = PersistedCounter.resume(stored: try store.loadCounter("group"), initial: 0, window: 100)
        let next = after.take().value
        #expect(!used.contains(next))
        #expect(next == 0xFFFF_FF00 &+ 300)
    }

    @Test func resumptionRecords_surviveReopen_onePerPeer_newestPerFabric_andGoWithTheirFabric() throws {
        func record(_ id: UInt8, peer: UInt64, fabric: UInt8) -> StoredResumption {
            StoredResumption(resumptionID: Array(repeating: id, count: 16), sharedSecret: Array(repeating: id &+ 100, count: 32),
                             peerNodeID: peer, fabricIndex: fabric)
        }
        do {
            let (db, store) = try open()
            #expect(try store.loadResumptions().isEmpty)
            try store.saveResumption(record(1, peer: 0xA, fabric: 1), keepPerFabric: 2)
            try store.saveResumption(record(2, peer: 0xB, fabric: 1), keepPerFabric: 2)
            try store.saveResumption(record(3, peer: 0xA, fabric: 2), keepPerFabric: 2)
            // The same peer again (a resumed session's new ID): it replaces the peer's record.
            try store.saveResumption(record(4, peer: 0xA, fabric: 1), keepPerFabric: 2)
            #expect(try store.loadResumptions() == [record(2, peer: 0xB, fabric: 1), record(3, peer: 0xA, fabric: 2), record(4, peer: 0xA, fabric: 1)])
            // A third peer on fabric 1: only its newest two stay; fabric 2 is untouched.
            try store.saveResumption(record(5, peer: 0xC, fabric: 1), keepPerFabric: 2)
            #expect(try store.loadResumptions().map(\.resumptionID.first) == [3, 4, 5])
            try db.pool.close()
        }
        // A restart (or kill -9) finds them, secrets and all.
        let (_, store) = try open()
        let loaded = try store.loadResumptions()
        #expect(loaded == [record(3, peer: 0xA, fabric: 2), record(4, peer: 0xA, fabric: 1), record(5, peer: 0xC, fabric: 1)])
        // Fabric 2 removed: its records go.
        try store.deleteResumptions(keeping: [1])
        #expect(try store.loadResumptions().map(\.fabricIndex) == [1, 1])
        try store.deleteResumptions(keeping: [])
        #expect(try store.loadResumptions().isEmpty)
    }

    @Test func endpointNumbersSurviveReopen_andAreNotReused() throws {
        do {
            let (db, store) = try open()
            var map = try store.loadEndpoints()
            let lamp = map.endpoint(for: "lamp"), relay = map.endpoint(for: "relay"), lampAgain = map.endpoint(for: "lamp")
            #expect(lamp.endpoint == 2 && lamp.isNew && relay.endpoint == 3 && relay.isNew)
            #expect(lampAgain.endpoint == 2 && !lampAgain.isNew)
            map.remove("lamp")
            try store.saveEndpoints(map)
            try db.pool.close()
        }
        let (_, store) = try open()
        var map = try store.loadEndpoints()
        #expect(map.endpoints == ["relay": 3])
        let sensor = map.endpoint(for: "sensor")
        #expect(sensor.endpoint == 4 && sensor.isNew)  // 2 is not handed out again
    }
}
