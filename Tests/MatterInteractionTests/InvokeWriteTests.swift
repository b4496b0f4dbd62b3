import HomeModel
import MatterInteraction
import MatterTLV
import Testing

/// Invoke, Write and timed interactions (Matter Core Specification 8.7, 8.8, 8.6).
@Suite struct InvokeWriteTests {
    let toggle = CommandData(path: CommandPath(endpoint: 2, cluster: 6, command: 2), fields: .structure([]))

    @Test func toggle_flipsTheValueAndMovesTheDataVersion() throws {
        var h = try Harness()
        let before = h.node.clusterInfo(ConcreteClusterPath(endpoint: 2, cluster: 6)).map(\.dataVersion)
        let ex = h.exchange()
        let effects = try h.send(InvokeRequestMessage(invokeRequests: [toggle]), on: ex)
        let response = try only(effects, InvokeResponseMessage.self)
        #expect(response.invokeResponses == [.status(CommandStatus(path: toggle.path, status: StatusIB(.success)))])
        #expect(closes(effects, ex))
        #expect(h.values.value(ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0)) == .bool(true))
        #expect(h.values.invokedNames == ["Toggle"])
        #expect(h.node.clusterInfo(ConcreteClusterPath(endpoint: 2, cluster: 6))?.dataVersion != before)
    }

    @Test(arguments: [
        (CommandPath(endpoint: 9, cluster: 6, command: 2), InteractionStatus.unsupportedEndpoint),
        (CommandPath(endpoint: 2, cluster: 8, command: 0), .unsupportedCluster),
        (CommandPath(endpoint: 2, cluster: 6, command: 0x40), .unsupportedCommand),
        (CommandPath(endpoint: 5, cluster: 0xFFF1_FC01, command: 0), .needsTimedInteraction),
    ])
    func refusedCommands_getPathStatuses(_ path: CommandPath, _ status: InteractionStatus) throws {
        var h = try Harness()
        let response = try only(try h.send(InvokeRequestMessage(invokeRequests: [CommandData(path: path, commandRef: 4)]), on: h.exchange()),
                                InvokeResponseMessage.self)
        #expect(response.invokeResponses == [.status(CommandStatus(path: path, status: StatusIB(status), commandRef: 4))])
    }

    @Test func invokeWithoutOperatePrivilege_isUnsupportedAccess() throws {
        var h = try Harness(access: AccessCheck { _, _, privilege in privilege <= .view })
        let response = try only(try h.send(InvokeRequestMessage(invokeRequests: [toggle]), on: h.exchange()), InvokeResponseMessage.self)
        #expect(response.invokeResponses == [.status(CommandStatus(path: toggle.path, status: StatusIB(.unsupportedAccess)))])
        #expect(h.values.value(ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0)) == .bool(false))
    }

    @Test func timedInvoke_afterATimedRequest_succeeds() throws {
        var h = try Harness()
        let ex = h.exchange()
        let timed = try h.send(TimedRequestMessage(timeout: 500), on: ex)
        #expect(try only(timed, StatusResponseMessage.self).status == .success)
        #expect(!closes(timed, ex))
        h.now = h.now.advanced(by: .milliseconds(400))
        let path = CommandPath(endpoint: 5, cluster: 0xFFF1_FC01, command: 0)
        let response = try only(try h.send(InvokeRequestMessage(invokeRequests: [CommandData(path: path)], timedRequest: true), on: ex),
                                InvokeResponseMessage.self)
        #expect(response.invokeResponses == [.status(CommandStatus(path: path, status: StatusIB(.success)))])
    }

    @Test func timedInvoke_afterTheTimeout_getsTimeout() throws {
        var h = try Harness()
        let ex = h.exchange()
        _ = try h.send(TimedRequestMessage(timeout: 500), on: ex)
        h.now = h.now.advanced(by: .milliseconds(501))
        let path = CommandPath(endpoint: 5, cluster: 0xFFF1_FC01, command: 0)
        let effects = try h.send(InvokeRequestMessage(invokeRequests: [CommandData(path: path)], timedRequest: true), on: ex)
        #expect(try only(effects, StatusResponseMessage.self).status == .timeout)
        #expect(closes(effects, ex))
    }

    @Test func timedFlagWithoutTimedRequest_andTheReverse_areMismatches() throws {
        var h = try Harness()
        let flagOnly = try h.send(InvokeRequestMessage(invokeRequests: [toggle], timedRequest: true), on: h.exchange())
        #expect(try only(flagOnly, StatusResponseMessage.self).status == .timedRequestMismatch)
        let ex = h.exchange()
        _ = try h.send(TimedRequestMessage(timeout: 500), on: ex)
        let noFlag = try h.send(InvokeRequestMessage(invokeRequests: [toggle]), on: ex)
        #expect(try only(noFlag, StatusResponseMessage.self).status == .timedRequestMismatch)
        #expect(h.values.value(ConcreteAttributePath(endpoint: 2, cluster: 6, attribute: 0)) == .bool(false))
    }

    @Test func writes_checkWritabilityConstraintsAndVersions() throws {
        var h = try Harness()
        let label = AttributePath(endpoint: 0, cluster: 0x28, attribute: 5)
        let vendor = AttributePath(endpoint: 0, cluster: 0x28, attribute: 1)
        let version = try #require(h.node.clusterInfo(ConcreteClusterPath(endpoint: 0, cluster: 0x28))?.dataVersion)
        let ex = h.exchange()
        let effects = try h.send(WriteRequestMessage(writeRequests: [
            AttributeData(path: label, data: TLVElement(.utf8("Kitchen bridge")), dataVersion: version),
            AttributeData(path: vendor, data: TLVElement(.utf8("Evil"))),
            AttributeData(path: label, data: TLVElement(.utf8(String(repeating: "x", count: 33)))),
            AttributeData(path: label, data: TLVElement(.unsigned(3))),
            AttributeData(path: label, data: TLVElement(.utf8("late")), dataVersion: version),
            AttributeData(path: AttributePath(endpoint: 9, cluster: 0x28, attribute: 5), data: TLVElement(.utf8("x"))),
        ]), on: ex)
        let response = try only(effects, WriteResponseMessage.self)
        #expect(response.writeResponses.map(\.status.status) == [
            .success, .unsupportedWrite, .constraintError, .invalidDataType, .dataVersionMismatch, .unsupportedEndpoint,
        ])
        #expect(closes(effects, ex))
        let read = try only(try h.send(ReadRequestMessage(attributeRequests: [label]), on: h.exchange()), ReportDataMessage.self)
        #expect(read.data[ConcreteAttributePath(endpoint: 0, cluster: 0x28, attribute: 5)] == TLVElement(.utf8("Kitchen bridge")))
    }

    @Test func writeNeedsManagePrivilegeForNodeLabel() throws {
        var h = try Harness(access: AccessCheck { _, _, privilege in privilege <= .operate })
        let label = AttributePath(endpoint: 0, cluster: 0x28, attribute: 5)
        let response = try only(try h.send(WriteRequestMessage(writeRequests: [AttributeData(path: label, data: TLVElement(.utf8("x")))]),
                                           on: h.exchange()), WriteResponseMessage.self)
        #expect(response.writeResponses.map(\.status.status) == [.unsupportedAccess])
    }

    @Test func catalogueValues_convertByTheirDataTypes() {
        #expect(ValueConversion.tlv(.int(2150), type: .int16, nullable: true) == .signed(2150))
        #expect(ValueConversion.tlv(.int(70000), type: .int16, nullable: true) == nil)
        #expect(ValueConversion.tlv(.null, type: .int16, nullable: true) == .null)
        #expect(ValueConversion.tlv(.null, type: .bool, nullable: false) == nil)
        #expect(ValueConversion.tlv(.list([.int(1), .int(2)]), type: .list, elementType: .uint8, nullable: false)
            == .array([TLVElement(.unsigned(1)), TLVElement(.unsigned(2))]))
        #expect(ValueConversion.value(.unsigned(300), type: .uint8, nullable: false) == nil)
        #expect(ValueConversion.value(.signed(-5), type: .int8, nullable: false) == .int(-5))
    }

    @Test func catalogueClusterRefusesIDsTheCatalogueLacks() {
        #expect(throws: InteractionError.self) { try CatalogCluster(trait: 0x0006, source: TestValues(), attributes: [0x7777]) }
        #expect(throws: InteractionError.self) { try CatalogCluster(trait: 0xFFF0_0000, source: TestValues()) }
    }
}
