import HomeCore
import HomeModel
import Testing

/// The consent step's rules, without storage or concurrency.
@Suite struct ConsentWorkflowTests {
    typealias Status = AppRequest.Status

    @Test func approvedRequestIssuesItsTokenOnce() throws {
        var flow = ConsentWorkflow(requestID: "req-1", status: .pending)
        #expect(try flow.claim() == false)
        #expect(flow.status == .pending)
        try flow.approve()
        #expect(flow.status == .approved)
        #expect(try flow.claim() == true)
        #expect(flow.status == .issued)
        do {
            _ = try flow.claim()
            Issue.record("a second claim must fail")
        } catch {
            #expect(error.code == .conflict)
        }
        #expect(flow.status == .issued)
    }

    @Test(arguments: [Status.approved, .denied, .issued, .revoked])
    func onlyAPendingRequestIsDecided(from status: Status) {
        var approve = ConsentWorkflow(requestID: "req-2", status: status)
        var deny = approve
        do {
            try approve.approve()
            Issue.record("approving a \(status) request must fail")
        } catch {
            #expect(error.code == .conflict)
            #expect(error.message.contains("req-2"))
            #expect(error.message.contains(status.rawValue))
        }
        do {
            try deny.deny()
            Issue.record("denying a \(status) request must fail")
        } catch {
            #expect(error.code == .conflict)
        }
        #expect(approve.status == status)
        #expect(deny.status == status)
    }

    @Test(arguments: [(Status.denied, "denied"), (.revoked, "revoked")])
    func deniedOrRevokedRequestIsRefusedItsToken(status: Status, word: String) {
        var flow = ConsentWorkflow(requestID: "req-3", status: status)
        do {
            _ = try flow.claim()
            Issue.record("claiming a \(status) request must fail")
        } catch {
            #expect(error.code == .permissionDenied)
            #expect(error.message.contains(word))
        }
        #expect(flow.status == status)
    }

    @Test(arguments: [(Status.pending, Status.pending), (.approved, .approved), (.denied, .denied), (.issued, .revoked), (.revoked, .revoked)])
    func revokingTouchesOnlyAnIssuedGrant(from: Status, to: Status) {
        var flow = ConsentWorkflow(requestID: "req-4", status: from)
        let changed = flow.revoke()
        #expect(changed == (from == .issued))
        #expect(flow.status == to)
    }

    @Test func deniedRequestStaysDenied() throws {
        var flow = ConsentWorkflow(requestID: "req-5", status: .pending)
        try flow.deny()
        #expect(flow.status == .denied)
        #expect(throws: HomeError.self) { _ = try flow.claim() }
        let changed = flow.revoke()
        #expect(!changed)
    }
}
