// The commissionee's side of AddNOC with a real commissioner's certificate authority
// (scripts/test-matter-controller):
//
//   matter-test-responder commissioning-check DIR [--wait SECONDS] [--advertise]
//
// Runs MatterCommissioning's logic as a commissioner would drive it over PASE: ArmFailSafe,
// AttestationRequest (checked with MatterSecurity's verifier against the test PAA),
// CSRRequest → writes DIR/comm.nocsr (hex NOCSR elements, as case-csr does), then waits for
// the authority to write DIR/comm.noc, comm.rcac, optionally comm.icac, and DIR/ipk (hex) and
// the script to create DIR/comm.ready once it has, and
// feeds them to AddTrustedRootCertificate and AddNOC, then CommissioningComplete over CASE.
// Prints "ADDNOC OK …" with the fabric entry and exits 0; "ADDNOC FAILED …" and 1 otherwise.
// With --advertise it then publishes the commissionable and the operational record through
// avahi (HAP's DNSSDAdvertiser), prints "ADVERTISED", and withdraws them once the script has
// browsed them (DIR/comm.browsed) or after the wait.
import Glibc
import HAP
import MatterCommissioning
import MatterSecurity

func commissioningFail(_ message: String) -> Never {
    print("ADDNOC FAILED \(message)")
    fflush(nil)
    exit(1)
}

func runCommissioningCheck(_ arguments: [String]) -> Never {
    guard let dir = arguments.first else { commissioningFail("usage: commissioning-check DIR [--wait SECONDS]") }
    let waitSeconds = arguments.count >= 3 && arguments[1] == "--wait" ? Int(arguments[2]) ?? 30 : 30
    let advertise = arguments.contains("--advertise")
    do {
        let attestation = try DevelopmentAttestation.installationCredentials()
        var state = CommissioningState(attestation: attestation)
        state.openInitialWindow(now: .now)
        let challenge = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let pase = SessionInfo(id: 1, authMode: .pase, attestationChallenge: challenge)
        guard state.armFailSafe(expiryLengthSeconds: 120, breadcrumb: 1, session: pase, now: .now).errorCode == .ok else {
            commissioningFail("ArmFailSafe refused")
        }
        let nonce = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let (elements, signature) = try state.attestationResponse(nonce: nonce, session: pase)
        let verified = try DeviceAttestationVerifier.development.verify(
            dac: try state.certificateChain(1), pai: try state.certificateChain(2), elements: elements, signature: signature, nonce: nonce,
            attestationChallenge: challenge)
        print("ATTESTATION OK vendor=0x\(String(verified.vendorID, radix: 16)) product=0x\(String(verified.productID, radix: 16))")
        let csr = try state.csrResponse(nonce: (0..<32).map { _ in UInt8.random(in: 0...255) }, session: pase)
        guard writeText("\(dir)/comm.nocsr.tmp", hexString(csr.elements)), rename("\(dir)/comm.nocsr.tmp", "\(dir)/comm.nocsr") == 0 else {
            commissioningFail("cannot write into \(dir)")
        }
        print("CSR written")
        fflush(nil)
        func hexFile(_ name: String) -> [UInt8]? { readText("\(dir)/\(name)").flatMap(hexBytes) }
        waitFor("\(dir)/comm.ready", seconds: waitSeconds)
        guard let noc = hexFile("comm.noc"), let rcac = hexFile("comm.rcac"), let ipk = hexFile("ipk") else {
            commissioningFail("the authority wrote no chain within \(waitSeconds) s")
        }
        try state.addTrustedRootCertificate(rcac)
        let response = try state.addNOC(noc: noc, icac: hexFile("comm.icac"), ipk: ipk, caseAdminSubject: 112_233, adminVendorID: 0xFFF1, session: pase)
        guard response.statusCode == .ok, let index = response.fabricIndex, let fabric = state.fabrics[index] else {
            commissioningFail("AddNOC answered \(response.statusCode) \(response.debugText)")
        }
        let admin = state.accessControl.first { $0.fabricIndex == index }
        guard admin?.privilege == .administer, admin?.subjects == [112_233] else { commissioningFail("no admin ACL entry for the commissioner") }
        let caseSession = SessionInfo(id: 2, authMode: .case, fabricIndex: index, peerNodeID: 112_233, attestationChallenge: challenge)
        guard state.commissioningComplete(session: caseSession).errorCode == .ok, state.failSafe == nil else {
            commissioningFail("CommissioningComplete refused")
        }
        let record = MatterAdvertisement.operational(fabric)
        print("ADDNOC OK index=\(index) fabric=0x\(String(fabric.fabricID, radix: 16)) node=0x\(String(fabric.nodeID, radix: 16)) "
              + "compressedFabric=\(String(fabric.compressedFabricID, radix: 16)) instance=\(record.instanceName) subtype=\(record.subtypes[0])")
        fflush(nil)
        if advertise {
            let advertiser = DNSSDAdvertiser()
            let commissionable = MatterAdvertisement.commissionable(
                .init(discriminator: 3840, vendorID: 0xFFF1, productID: 0x8000, commissioningMode: 1, deviceType: 0x000E, deviceName: "Hearth"),
                instanceName: "0123456789ABCDEF", port: 5541)
            for (key, r) in [("c", commissionable), ("o", record)] {
                try advertiser.publish(key: key, name: r.instanceName, type: r.serviceType, subtypes: r.subtypes, port: r.port,
                                       txt: r.txt.map { ($0.key, $0.value) })
            }
            print("ADVERTISED")
            fflush(nil)
            waitFor("\(dir)/comm.browsed", seconds: waitSeconds)
            advertiser.stop()
        }
        exit(0)
    } catch {
        commissioningFail("\(error)")
    }
}

/// Waits (bounded) for a file the script creates.
func waitFor(_ path: String, seconds: Int) {
    var waited = 0
    while access(path, F_OK) != 0, waited < seconds * 10 {
        usleep(100_000)
        waited += 1
    }
}
