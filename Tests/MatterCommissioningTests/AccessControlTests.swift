import MatterCommissioning
import Testing

@Suite struct AccessControlTests {
    /// The spec's grant table (9.10.4.2.1): row = held, columns = required.
    static let grants: [(Privilege, [Privilege])] = [
        (.view, [.view]),
        (.proxyView, [.view, .proxyView]),
        (.operate, [.view, .operate]),
        (.manage, [.view, .operate, .manage]),
        (.administer, [.view, .proxyView, .operate, .manage, .administer]),
    ]

    @Test(arguments: grants) func privilegeHierarchy(held: Privilege, granted: [Privilege]) {
        for required in Privilege.allCases {
            #expect(held.grants(required) == granted.contains(required), "\(held) → \(required)")
        }
    }

    let path = RequestPath(endpoint: 3, cluster: 0x0006, deviceTypes: [0x0100])
    func node(_ id: UInt64, fabric: FabricIndex = 1, cats: [UInt32] = []) -> SubjectDescriptor {
        SubjectDescriptor(fabricIndex: fabric, authMode: .case, subject: id, caseAuthenticatedTags: cats)
    }

    @Test func entryMustMatchFabricAuthModeSubjectAndPrivilege() {
        let acl = [AccessControlEntry(privilege: .operate, authMode: .case, subjects: [0x10], fabricIndex: 1)]
        #expect(AccessControl.isGranted(.operate, to: node(0x10), on: path, entries: acl))
        #expect(AccessControl.isGranted(.view, to: node(0x10), on: path, entries: acl))
        #expect(!AccessControl.isGranted(.manage, to: node(0x10), on: path, entries: acl))
        #expect(!AccessControl.isGranted(.operate, to: node(0x11), on: path, entries: acl))
        #expect(!AccessControl.isGranted(.operate, to: node(0x10, fabric: 2), on: path, entries: acl))
        let group = SubjectDescriptor(fabricIndex: 1, authMode: .group, subject: 0x10)
        #expect(!AccessControl.isGranted(.operate, to: group, on: path, entries: acl))
        #expect(!AccessControl.isGranted(.view, to: node(0x10), on: path, entries: []))
    }

    @Test func emptySubjectsMeanAnySubject_andTargetsNarrow() {
        let acl = [AccessControlEntry(privilege: .view, authMode: .case, subjects: [],
                                      targets: [AccessControlTarget(cluster: 0x0006, endpoint: 3), AccessControlTarget(deviceType: 0x0302)],
                                      fabricIndex: 1)]
        #expect(AccessControl.isGranted(.view, to: node(0x99), on: path, entries: acl))
        #expect(!AccessControl.isGranted(.view, to: node(0x99), on: RequestPath(endpoint: 4, cluster: 0x0006), entries: acl))
        #expect(!AccessControl.isGranted(.view, to: node(0x99), on: RequestPath(endpoint: 3, cluster: 0x0008), entries: acl))
        #expect(AccessControl.isGranted(.view, to: node(0x99), on: RequestPath(endpoint: 9, cluster: 0x0402, deviceTypes: [0x0302]), entries: acl))
    }

    @Test func catSubjectsMatchIdentifierAndMinimumVersion() {
        let acl = [AccessControlEntry(privilege: .administer, authMode: .case, subjects: [0xFFFF_FFFD_ABCD_0002], fabricIndex: 1)]
        #expect(AccessControl.isGranted(.administer, to: node(0x5, cats: [0xABCD_0002]), on: path, entries: acl))
        #expect(AccessControl.isGranted(.administer, to: node(0x5, cats: [0xABCD_0003]), on: path, entries: acl))
        #expect(!AccessControl.isGranted(.administer, to: node(0x5, cats: [0xABCD_0001]), on: path, entries: acl))
        #expect(!AccessControl.isGranted(.administer, to: node(0x5, cats: [0xABCE_0002]), on: path, entries: acl))
    }

    @Test func paseHasImplicitAdminOnlyWhileCommissioning() {
        let commissioning = SubjectDescriptor(fabricIndex: 0, authMode: .pase, subject: 0, isCommissioning: true)
        #expect(AccessControl.isGranted(.administer, to: commissioning, on: path, entries: []))
        var after = commissioning
        after.isCommissioning = false
        #expect(!AccessControl.isGranted(.view, to: after, on: path, entries: []))
    }

    @Test func validateRefusesWhatTheSpecForbids() {
        func refused(_ e: AccessControlEntry) -> Bool {
            do { try AccessControl.validate(e); return false } catch { return error.status == .constraintError }
        }
        #expect(refused(AccessControlEntry(privilege: .view, authMode: .pase, subjects: [], fabricIndex: 1)))
        #expect(refused(AccessControlEntry(privilege: .administer, authMode: .group, subjects: [1], fabricIndex: 1)))
        #expect(refused(AccessControlEntry(privilege: .view, authMode: .case, subjects: [0], fabricIndex: 1)))
        #expect(refused(AccessControlEntry(privilege: .view, authMode: .case, subjects: [1, 2, 3, 4, 5], fabricIndex: 1)))
        #expect(refused(AccessControlEntry(privilege: .view, authMode: .case, subjects: [], targets: [AccessControlTarget()], fabricIndex: 1)))
        #expect(refused(AccessControlEntry(privilege: .view, authMode: .case, subjects: [],
                                           targets: [AccessControlTarget(endpoint: 1, deviceType: 0x100)], fabricIndex: 1)))
        #expect(refused(AccessControlEntry(privilege: .view, authMode: .group, subjects: [0x1_0000], fabricIndex: 1)))
        #expect(!refused(AccessControlEntry(privilege: .manage, authMode: .case, subjects: [0x10, 0xFFFF_FFFD_0001_0001],
                                            targets: [AccessControlTarget(cluster: 6, endpoint: 1)], fabricIndex: 1)))
    }

    @Test func aclWrite_replacesOnlyTheWritersFabric() throws {
        var state = Fixture.state()
        try Fixture.commission(&state, authority: try TestAuthority(), now: .now)
        let entries = [AccessControlEntry(privilege: .administer, authMode: .case, subjects: [Fixture.adminNode], fabricIndex: 9),
                       AccessControlEntry(privilege: .operate, authMode: .case, subjects: [0x42], fabricIndex: 9)]
        try state.setAccessControlEntries(entries, fabric: 1)
        #expect(state.accessControl.map(\.fabricIndex) == [1, 1])
        #expect(state.isGranted(.operate, to: node(0x42), on: path))
        #expect(throws: CommissioningError.self) { try state.setAccessControlEntries(entries, fabric: 3) }
        #expect(throws: CommissioningError.self) { try state.setAccessControlEntries(Array(repeating: entries[1], count: 5), fabric: 1) }
    }
}
