import Crypto
import Foundation
import HomeStorage
import MatterBridge
import MatterCommissioning
import MatterInteraction
@testable import MatterMessaging
import MatterSecurity
import MatterTLV
import Synchronization
import Testing

/// Bad input over real UDP on loopback (issue 21): wrong passcodes up to the spec's attempt
/// limit, a replayed message, a CASE Sigma1 for an unknown fabric or destination, and a
/// controller that vanishes mid-commissioning. Each is refused or rolled back with a log line,
/// and an established session keeps working through it.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BadInputTests {
    let bridgeNode: UInt64 = 0xB1
    let adminNode: UInt64 = 0xC0

    /// A running bridge on a fresh store whose log the test reads.
    final class Bridge {
        let dir = TemporaryStore()
        let log = CapturedLog()
        let database: HearthDatabase
        let store: MatterStateStore
        let service: MatterBridgeService
        let task: Task<Void, Never>

        /// `prepare` fills the store before the service starts.
        init(prepare: (MatterStateStore) throws -> Void = { _ in }) throws {
            (database, store) = try dir.open()
            try prepare(store)
            let service = try MatterBridgeService(configuration: .init(port: 0), store: store, node: MatterNode(), publisher: RecordingPublisher(),
                                                  logger: log.logger)
            self.service = service
            task = Task { await service.run() }
        }

        var passcode: UInt32 { get throws { try QRCodePayload(parsing: service.status.qrPayload).passcode.value } }

        func stop() {
            task.cancel()
            dir.remove()
        }
    }

    /// The bridge with a commissioned fabric, and that fabric's controller on a CASE session.
    func commissioned() async throws -> (bridge: Bridge, fabric: TestFabric, admin: TestController) {
        let fabric = try TestFabric(fabricID: 0x77)
        let bridge = try Bridge { try fabric.install(in: $0, bridgeNode: bridgeNode, admin: adminNode) }
        let admin = try TestController(bridgePort: bridge.service.port)
        _ = try await admin.caseSession(try fabric.controller(adminNode), bridgeNode: bridgeNode)
        #expect(try await admin.read(0, 0x0028, 0x02).uint() == 0xFFF1)
        return (bridge, fabric, admin)
    }

    /// 20 failed PASE attempts close the window (Matter Core Specification 5.4.2.3 / 5.5: the
    /// commissionee exits commissioning mode after 20 failed attempts); the 19th leaves it
    /// open. The right passcode no longer works until an administrator opens a new window, and
    /// the controller's CASE session works throughout.
    @Test func wrongPasscodes_closeTheWindowAtTheAttemptLimit_andTheCASESessionKeepsWorking() async throws {
        let (bridge, _, admin) = try await commissioned()
        defer { bridge.stop(); admin.stop() }
        let service = bridge.service, log = bridge.log
        try service.openCommissioningWindow()
        #expect(service.status.windowStatus == WindowStatus.basicWindowOpen.rawValue)
        let passcode = try bridge.passcode
        let wrongCode: UInt32 = passcode == 20_202_021 ? 20_202_022 : 20_202_021
        let wrong = try TestController(bridgePort: service.port)
        defer { wrong.stop() }
        for attempt in 1...20 {
            await #expect(throws: ControllerError.self) { try await wrong.pase(passcode: wrongCode) }
            if attempt == 19 { #expect(service.status.windowStatus == WindowStatus.basicWindowOpen.rawValue) }
        }
        #expect(await eventually { service.status.windowStatus == WindowStatus.windowNotOpen.rawValue })
        #expect(log.contains("Matter PASE failed"))
        #expect(log.contains("Matter commissioning window closed after 20 failed PASE attempts"))
        let late = try TestController(bridgePort: service.port)
        defer { late.stop() }
        await #expect(throws: ControllerError.self) { try await late.pase(passcode: passcode) }
        // The other session never noticed.
        #expect(try await admin.read(0, 0x0028, 0x04).uint() == 0x8000)
        // A new window: the count starts again and the right passcode works.
        try service.openCommissioningWindow()
        try await late.pase(passcode: passcode)
        #expect(try await late.read(0, 0x0028, 0x02).uint() == 0xFFF1)
    }

    /// Every datagram of a finished read sent again (same message counters, same session):
    /// the bridge's message counter refuses each as a duplicate, logs it, delivers none of them
    /// again, and the session's next read works.
    @Test func replayedMessages_areRefusedByTheCounter_andTheSessionKeepsWorking() async throws {
        let bridge = try Bridge()
        defer { bridge.stop() }
        let service = bridge.service, log = bridge.log
        let relay = try UDPRelay(bridgePort: service.port)
        defer { relay.stop() }
        let controller = try TestController(bridgePort: relay.port)
        defer { controller.stop() }
        try await controller.pase(passcode: try bridge.passcode)
        #expect(try await controller.read(0, 0x0028, 0x02).uint() == 0xFFF1)
        try await Task.sleep(for: .milliseconds(300))  // the controller's ack of the report goes out
        let mark = relay.fromController.count
        #expect(try await controller.read(0, 0x0028, 0x04).uint() == 0x8000)
        try await Task.sleep(for: .milliseconds(300))
        let captured = Array(relay.fromController.suffix(from: mark))
        #expect(!captured.isEmpty)
        let droppedBefore = service.droppedMessages
        for datagram in captured { relay.replayToBridge(datagram) }
        #expect(await eventually { service.droppedMessages >= droppedBefore + captured.count })
        #expect(await eventually { log.contains("Matter message dropped") && log.contains("duplicate message counter") })
        // The session goes on.
        #expect(try await controller.read(0, 0x0028, 0x03).string() == "Hearth")
        #expect(try await controller.read(0, 0x003C, 0x00).uint() == 2)
    }

    /// Sigma1 from another fabric (its root is not the bridge's) and Sigma1 on the right fabric
    /// for a node that is not the bridge (a destination ID that matches nothing): both refused
    /// (the initiator's CASE fails), logged, and the admin's CASE session keeps working.
    @Test func caseForAnUnknownFabricOrDestination_isRefused_logged_andTheOtherSessionKeepsWorking() async throws {
        let (bridge, fabric, admin) = try await commissioned()
        defer { bridge.stop(); admin.stop() }
        let log = bridge.log
        let stranger = try TestController(bridgePort: bridge.service.port)
        defer { stranger.stop() }
        let otherFabric = try TestFabric(fabricID: 0x99)
        await #expect(throws: (any Error).self) { _ = try await stranger.caseSession(try otherFabric.controller(0xD0), bridgeNode: bridgeNode) }
        #expect(await eventually { log.contains("Matter CASE failed") })
        #expect(try await admin.read(0, 0x0028, 0x04).uint() == 0x8000)
        let failures = log.lines.withLock { $0.filter { $0.contains("Matter CASE failed") }.count }
        await #expect(throws: (any Error).self) { _ = try await stranger.caseSession(try fabric.controller(0xD1), bridgeNode: 0xB2) }
        #expect(await eventually { log.lines.withLock { $0.filter { $0.contains("Matter CASE failed") }.count } > failures })
        // A wrong IPK is another unknown destination.
        let wrongIPK = try TestFabric(fabricID: 0x77, ipk: [UInt8](repeating: 0x24, count: 16))
        await #expect(throws: (any Error).self) { _ = try await stranger.caseSession(try wrongIPK.controller(0xD2), bridgeNode: bridgeNode) }
        #expect(try await admin.read(0, 0x0028, 0x02).uint() == 0xFFF1)
    }

    /// A commissioner that arms a 2 s fail-safe, gets as far as AddNOC and vanishes (no
    /// CommissioningComplete, no CloseSession): the fail-safe expires, the new fabric, its
    /// ACL and root are rolled back (logged), the window is still open, and the next
    /// commissioner's PASE works.
    @Test func commissionerVanishingAfterAddNOC_failSafeExpiryRollsBack_andTheWindowStaysOpen() async throws {
        let bridge = try Bridge()
        defer { bridge.stop() }
        let service = bridge.service, log = bridge.log
        #expect(await eventually { service.status.windowStatus == WindowStatus.basicWindowOpen.rawValue })
        let passcode = try bridge.passcode
        let fabric = try TestFabric(fabricID: 0x55)
        let vanishing = try TestController(bridgePort: service.port)
        try await vanishing.pase(passcode: passcode)
        let armed = try await vanishing.invoke(0, 0x0030, 0, [TLVElement(.context(0), .unsigned(2)), TLVElement(.context(1), .unsigned(1))])
        #expect(try armed.fields?.member(.context(0)).uint() == 0)
        let csr = try await vanishing.invoke(0, 0x003E, 4, [TLVElement(.context(0), .bytes((0..<32).map { UInt8($0) }))])
        let elements = try TLVElement(decoding: try #require(csr.fields).member(.context(0)).bytes())
        let key = try Fabric.publicKey(ofCSR: try elements.member(.context(1)).bytes())
        #expect(try await vanishing.invoke(0, 0x003E, 0x0B, [TLVElement(.context(0), .bytes(try fabric.root.tlvEncoded()))]).status == .success)
        let added = try await vanishing.invoke(0, 0x003E, 6, [
            TLVElement(.context(0), .bytes(try fabric.noc(bridgeNode, key).tlvEncoded())),
            TLVElement(.context(2), .bytes(fabric.ipk)), TLVElement(.context(3), .unsigned(adminNode)), TLVElement(.context(4), .unsigned(0xFFF1)),
        ])
        #expect(try added.fields?.member(.context(0)).uint() == 0)  // NOCResponse OK
        #expect(service.status.fabrics.count == 1)
        vanishing.stop()  // gone: nothing more from it

        #expect(await eventually(8) { service.status.fabrics.isEmpty })
        #expect(await eventually { log.contains("Matter fail-safe expired") })
        #expect(try bridge.store.loadCommissioning().fabrics.isEmpty)
        #expect(service.status.windowStatus == WindowStatus.basicWindowOpen.rawValue)
        let next = try TestController(bridgePort: service.port)
        defer { next.stop() }
        try await next.pase(passcode: passcode)
        #expect(try await next.read(0, 0x003C, 0x00).uint() == 2)
    }
}

/// A UDP relay between a controller and the bridge that keeps every datagram the controller
/// sent, so a test can send one to the bridge again (a replay from the same address).
final class UDPRelay: Sendable {
    let socket: UDPSocket
    let bridge: PeerAddress
    private let controller = Mutex<PeerAddress?>(nil)
    private let captured = Mutex<[[UInt8]]>([])
    private let stopped = Atomic<Bool>(false)

    var port: UInt16 { socket.port }
    var fromController: [[UInt8]] { captured.withLock { $0 } }

    init(bridgePort: UInt16) throws {
        socket = try UDPSocket(port: 0)
        bridge = PeerAddress(host: "::1", port: bridgePort)
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                for (bytes, from) in socket.receive(timeoutMilliseconds: 20) {
                    if from.port == bridge.port {
                        if let c = controller.withLock({ $0 }) { socket.send(bytes, to: c) }
                    } else {
                        controller.withLock { $0 = from }
                        captured.withLock { $0.append(bytes) }
                        socket.send(bytes, to: bridge)
                    }
                }
            }
        }
        thread.start()
    }

    func replayToBridge(_ datagram: [UInt8]) { socket.send(datagram, to: bridge) }

    func stop() {
        stopped.store(true, ordering: .releasing)
    }
}
