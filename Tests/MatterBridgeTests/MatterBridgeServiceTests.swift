import Crypto
import Foundation
import HomeStorage
import MatterBridge
import MatterCommissioning
import MatterInteraction
import MatterMessaging
import MatterSecurity
import MatterTLV
import Testing

/// The service over real UDP on loopback with a real SQLite store: PASE with the stored
/// passcode, the root clusters read and invoked as a commissioner does, the Aggregator's
/// PartsList following endpoints, advertisements, and what survives a restart.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct MatterBridgeServiceTests {
    func start(_ store: MatterStateStore, publisher: RecordingPublisher, node: MatterNode = MatterNode())
        throws -> (MatterBridgeService, Task<Void, Never>)
    {
        let service = try MatterBridgeService(configuration: .init(port: 0), store: store, node: node, publisher: publisher, logger: testLogger())
        let task = Task { await service.run() }
        return (service, task)
    }

    @Test func firstStart_opensWindow_advertisesCommissionable_andKeepsItsSecretsAcrossRestarts() async throws {
        let dir = TemporaryStore()
        defer { dir.remove() }
        let (db, store) = try dir.open()
        let publisher = RecordingPublisher()
        let (service, task) = try start(store, publisher: publisher)
        // run() opens the first window: no fabric yet.
        #expect(await eventually { service.status.windowStatus == WindowStatus.basicWindowOpen.rawValue })
        let status = service.status
        #expect(status.fabrics.isEmpty)
        let parsed = try QRCodePayload(parsing: status.qrPayload)
        #expect(parsed.discriminator.value == status.discriminator)
        #expect(try ManualPairingCode(parsing: status.manualPairingCode).passcode == parsed.passcode)
        #expect(await eventually { publisher.snapshot["matterc"] != nil })
        let record = try #require(publisher.snapshot["matterc"])
        #expect(record.serviceType == "_matterc._udp")
        #expect(record.subtypes.contains("_L\(status.discriminator)"))
        #expect(record.subtypes.contains("_S\(status.discriminator >> 8)"))
        #expect(record.subtypes.contains("_V\(0xFFF1)"))
        #expect(record.txt.contains { $0.key == "CM" && $0.value == "1" })
        #expect(record.port == service.port)
        task.cancel()
        await task.value
        #expect(publisher.snapshot.isEmpty)
        // A second start on the same file: the same pairing code.
        let (again, task2) = try start(store, publisher: RecordingPublisher())
        #expect(again.status.manualPairingCode == status.manualPairingCode)
        #expect(again.status.qrPayload == status.qrPayload)
        task2.cancel()
        await task2.value
        withExtendedLifetime(db) {}
    }

    @Test func caseResumption_survivesARestart_throughTheStore_andEndsWithItsFabric() async throws {
        let dir = TemporaryStore()
        defer { dir.remove() }
        // A fabric (root → NOCs for the bridge and a controller) already in the store.
        let fabric = try TestFabric(fabricID: 0x77)
        let bridgeNode: UInt64 = 0xB1, controllerNode: UInt64 = 0xC0
        let controller = try fabric.controller(controllerNode)
        do {
            let (_, store) = try dir.open()
            try fabric.install(in: store, bridgeNode: bridgeNode, admin: controllerNode)
        }

        // First run: a full CASE; the bridge keeps the resumption record.
        let record: CASEResumptionRecord?
        do {
            let (db, store) = try dir.open()
            let (service, task) = try start(store, publisher: RecordingPublisher())
            let client = try TestController(bridgePort: service.port)
            let (resumed, r) = try await client.caseSession(controller, bridgeNode: bridgeNode)
            #expect(!resumed)
            #expect(try await client.read(0, 0x0028, 0x02).uint() == 0xFFF1)
            record = r
            #expect(try store.loadResumptions().map(\.peerNodeID) == [controllerNode])
            client.stop()
            task.cancel()
            await task.value
            withExtendedLifetime(db) {}
        }

        // A restart (a new service on the same file): the record resumes the session.
        let (db, store) = try dir.open()
        let (service, task) = try start(store, publisher: RecordingPublisher())
        defer { task.cancel() }
        let client = try TestController(bridgePort: service.port)
        defer { client.stop() }
        #expect(record != nil)
        let (resumed, next) = try await client.caseSession(controller, bridgeNode: bridgeNode, resumption: record)
        #expect(resumed)
        #expect(await eventually { service.resumedSessions == 1 })
        #expect(try await client.read(0, 0x0028, 0x02).uint() == 0xFFF1)
        // The resumed session's new record replaced the old one (one per peer).
        let stored = try store.loadResumptions()
        #expect(stored.map(\.resumptionID) == [try #require(next).resumptionID])

        // The fabric removed: its records go, and the peer cannot resume any more.
        try service.removeFabric(1)
        #expect(await eventually { (try? store.loadResumptions().isEmpty) == true })
        let again = try TestController(bridgePort: service.port)
        defer { again.stop() }
        await #expect(throws: (any Error).self) { _ = try await again.caseSession(controller, bridgeNode: bridgeNode, resumption: next) }
        withExtendedLifetime(db) {}
    }

    @Test func pase_thenCommissionerReads_attests_andRequestsACSR() async throws {
        let dir = TemporaryStore()
        defer { dir.remove() }
        let (db, store) = try dir.open()
        let node = MatterNode()
        let (service, task) = try start(store, publisher: RecordingPublisher(), node: node)
        defer { task.cancel() }
        let controller = try TestController(bridgePort: service.port)
        defer { controller.stop() }
        let passcode = try QRCodePayload(parsing: service.status.qrPayload).passcode.value
        let challenge = try await controller.pase(passcode: passcode)

        // Basic Information and the General Commissioning attributes a commissioner reads.
        #expect(try await controller.read(0, 0x0028, 0x02).uint() == 0xFFF1)
        #expect(try await controller.read(0, 0x0028, 0x03).string() == "Hearth")
        #expect(try await controller.read(0, 0x0030, 0x04).bool() == true)
        let info = try await controller.read(0, 0x0030, 0x01)
        #expect(try info.member(.context(0)).uint() == 60)
        #expect(try await controller.read(0, 0x0031, 0xFFFC).uint() == 4)  // Ethernet
        #expect(try await controller.read(0, 0x003C, 0x00).uint() == 2)  // basic window open
        let rootDescriptorTypes = try await controller.read(0, 0x001D, 0x00)
        #expect(try rootDescriptorTypes.members?.first?.member(.context(0)).uint() == 0x0016)
        let aggregatorTypes = try await controller.read(1, 0x001D, 0x00)
        #expect(try aggregatorTypes.members?.first?.member(.context(0)).uint() == 0x000E)

        // The Aggregator's PartsList follows endpoints added under it (part B adds them).
        #expect(try await controller.read(1, 0x001D, 0x03).members?.isEmpty == true)
        node.addEndpoint(7, deviceTypes: [DeviceTypeEntry(0x0015, revision: 1), .bridgedNode], parent: 1, clusters: [
            BridgedDeviceBasicInformation.cluster(nodeLabel: "Door", uniqueID: "door-1"),
        ])
        #expect(try await controller.read(1, 0x001D, 0x03).members?.map { try $0.uint() } == [7])
        #expect(try await controller.read(0, 0x001D, 0x03).members?.map { try $0.uint() } == [1, 7])
        node.removeEndpoint(7)
        #expect(try await controller.read(1, 0x001D, 0x03).members?.isEmpty == true)

        // ArmFailSafe → ArmFailSafeResponse(OK).
        let armed = try await controller.invoke(0, 0x0030, 0, [TLVElement(.context(0), .unsigned(60)), TLVElement(.context(1), .unsigned(1))])
        #expect(try armed.fields?.member(.context(0)).uint() == 0)
        #expect(try await controller.read(0, 0x0030, 0x00).uint() == 1)  // breadcrumb

        // AttestationRequest: verified against the test PAA with this session's challenge.
        let nonce = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let attestation = try await controller.invoke(0, 0x003E, 0, [TLVElement(.context(0), .bytes(nonce))])
        let dac = try await controller.invoke(0, 0x003E, 2, [TLVElement(.context(0), .unsigned(1))])
        let pai = try await controller.invoke(0, 0x003E, 2, [TLVElement(.context(0), .unsigned(2))])
        let verified = try DeviceAttestationVerifier.development.verify(
            dac: try #require(dac.fields).member(.context(0)).bytes(), pai: try #require(pai.fields).member(.context(0)).bytes(),
            elements: try #require(attestation.fields).member(.context(0)).bytes(),
            signature: try #require(attestation.fields).member(.context(1)).bytes(), nonce: nonce, attestationChallenge: challenge)
        #expect(verified.vendorID == 0xFFF1)

        // CSRRequest: NOCSR elements with our nonce.
        let csrNonce = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let csr = try await controller.invoke(0, 0x003E, 4, [TLVElement(.context(0), .bytes(csrNonce))])
        let elements = try TLVElement(decoding: try #require(csr.fields).member(.context(0)).bytes())
        #expect(try elements.member(.context(2)).bytes() == csrNonce)

        // A bad nonce length is a CONSTRAINT_ERROR, an unknown certificate type INVALID_COMMAND.
        #expect(try await controller.invoke(0, 0x003E, 0, [TLVElement(.context(0), .bytes([1, 2, 3]))]).status == .constraintError)
        #expect(try await controller.invoke(0, 0x003E, 2, [TLVElement(.context(0), .unsigned(9))]).status == .invalidCommand)
        // CommissioningComplete over PASE: InvalidAuthentication (2).
        let complete = try await controller.invoke(0, 0x0030, 4, [])
        #expect(try complete.fields?.member(.context(0)).uint() == 2)
        withExtendedLifetime(db) {}
    }

    @Test func wrongPasscode_failsPASE_andTheRightOneStillWorks() async throws {
        let dir = TemporaryStore()
        defer { dir.remove() }
        let (db, store) = try dir.open()
        let (service, task) = try start(store, publisher: RecordingPublisher())
        defer { task.cancel() }
        let passcode = try QRCodePayload(parsing: service.status.qrPayload).passcode.value
        let wrong = try TestController(bridgePort: service.port)
        defer { wrong.stop() }
        await #expect(throws: ControllerError.self) { try await wrong.pase(passcode: passcode == 20_202_021 ? 20_202_022 : 20_202_021) }
        let right = try TestController(bridgePort: service.port)
        defer { right.stop() }
        try await right.pase(passcode: passcode)
        #expect(try await right.read(0, 0x0028, 0x04).uint() == 0x8000)
        withExtendedLifetime(db) {}
    }

    @Test func casePathWithoutASession_isRefused_andOpenWindowNeedsNoFailSafe() async throws {
        let dir = TemporaryStore()
        defer { dir.remove() }
        let (db, store) = try dir.open()
        let (service, task) = try start(store, publisher: RecordingPublisher())
        defer { task.cancel() }
        // The administrator's window through the API: allowed while the first window is open (replaced).
        try service.openCommissioningWindow()
        #expect(service.status.windowStatus == WindowStatus.basicWindowOpen.rawValue)
        #expect((service.status.windowSecondsLeft ?? 0) > 800)
        // A fail-safe armed over PASE makes the API refuse.
        let controller = try TestController(bridgePort: service.port)
        defer { controller.stop() }
        try await controller.pase(passcode: try QRCodePayload(parsing: service.status.qrPayload).passcode.value)
        _ = try await controller.invoke(0, 0x0030, 0, [TLVElement(.context(0), .unsigned(60)), TLVElement(.context(1), .unsigned(0))])
        #expect(throws: MatterBridgeError.self) { try service.openCommissioningWindow() }
        #expect(throws: MatterBridgeError.self) { try service.removeFabric(3) }
        withExtendedLifetime(db) {}
    }
}
