import MatterMessaging
import Testing

/// Two nodes on real UDP sockets over loopback, IPv6 and IPv4 (the socket is dual-stack).
@Suite struct UDPLoopbackTests {
    @Test(arguments: ["::1", "127.0.0.1"])
    func requestAndResponseOverLoopback(host: String) async throws {
        let server = try MatterUDPNode(port: 0)
        let client = try MatterUDPNode(port: 0)
        let serverEvents = server.events(for: .interactionModel)
        let clientEvents = client.events(for: .interactionModel)
        let sessionAtClient = try client.addSecureSession(SecureSessionParameters(
            role: .initiator, i2rKey: keyA, r2iKey: keyB, localSessionID: 10, peerSessionID: 20,
            peerAddress: PeerAddress(host: host, port: server.port)))
        // The server learns the client's address from its first message.
        try server.addSecureSession(SecureSessionParameters(
            role: .responder, i2rKey: keyA, r2iKey: keyB, localSessionID: 20, peerSessionID: 10,
            peerAddress: PeerAddress(host: host, port: 1)))

        let answers = try await withThrowingTaskGroup(of: [[UInt8]]?.self) { group in
            group.addTask { await server.run(); return nil }
            group.addTask { await client.run(); return nil }
            group.addTask {
                for await event in serverEvents {
                    guard case .message(let m) = event else { continue }
                    try server.send(on: m.exchange, opcode: 5, payload: m.payload.reversed())
                    server.close(m.exchange)
                }
                return nil
            }
            group.addTask {
                var events = clientEvents.makeAsyncIterator()
                var answers: [[UInt8]] = []
                for i in 0..<5 {
                    let ex = try client.newExchange(on: sessionAtClient, protocolID: .interactionModel)
                    try client.send(on: ex, opcode: 2, payload: [UInt8(i), 0xAA])
                    guard case .message(let m)? = await events.next() else { return answers }
                    answers.append(m.payload)
                    client.close(ex)
                }
                return answers
            }
            group.addTask {
                try await Task.sleep(for: .seconds(20))  // watchdog: the test fails instead of hanging
                throw MessagingError(.transport, "no answers over \(host) within 20 s")
            }
            while let result = try await group.next() {
                if let result {
                    group.cancelAll()
                    return result
                }
            }
            return []
        }
        #expect(answers == (0..<5).map { [0xAA, UInt8($0)] })
    }

    @Test func bindsDualStack() throws {
        let node = try MatterUDPNode(port: 0)
        #expect(node.port != 0)
        #expect(node.isDualStack)
    }
}

