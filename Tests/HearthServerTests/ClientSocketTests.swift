import Foundation
import HearthAPI
import HearthClient
import HearthServer
import HomeCore
import HomeModel
import Testing

/// The Swift client carries all the subscriptions of one connection over one WebSocket, and
/// each still ends on its own, with its own reason.
@Suite struct ClientSocketTests {
    /// Waits (bounded: 10 s) until the server has `count` sockets open.
    func sockets(_ home: TestHome, become count: Int) async throws -> Bool {
        for _ in 0..<500 {
            if home.server.openWebSocketCount == count { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return home.server.openWebSocketCount == count
    }

    @Test(.timeLimit(.minutes(1))) func manySubscriptions_shareOneSocket_andEachEndsWithItsOwnReason() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let app = try home.appToken(scope: GrantScope(deviceTypes: nil, includeSensitive: true))
            let client = HearthClient.Home(connection: HearthConnection(baseURL: home.baseURL, token: app.token))

            // Twelve subscriptions, ten of them under the same caller ID.
            var rooms = (0..<10).map { _ in client.messages(.subscribe(id: "rooms", .rooms(.batched))).makeAsyncIterator() }
            var lamp = client.messages(.subscribe(id: "lamp", .device(TestHome.lamp))).makeAsyncIterator()
            var door = client.messages(.subscribe(id: "door", .device(TestHome.contact))).makeAsyncIterator()
            for i in rooms.indices {
                let first = await rooms[i].next()
                guard case .snapshot(let id, _, .rooms(let list)) = first else { Issue.record("rooms \(i): \(String(describing: first))"); return }
                #expect(id == "rooms", "messages come back under the caller's ID")
                #expect(list.contains { $0.name == "Living Room" })
            }
            guard case .device("lamp", _) = await lamp.next() else { Issue.record("no lamp"); return }
            guard case .device("door", _) = await door.next() else { Issue.record("no door"); return }
            #expect(home.server.openWebSocketCount == 1, "twelve subscriptions, one socket")

            // The lamp goes: its subscription alone ends, saying why.
            #expect(try await home.call("POST", "devices/\(TestHome.lamp.rawValue)/decommission", token: admin).status < 300)
            var ended: WSServerMessage?
            while let m = await lamp.next() { ended = m }
            guard case .end("lamp", .deviceRemoved, _) = ended else { Issue.record("lamp ended with \(String(describing: ended))"); return }
            // The others live on over the same socket.
            #expect(try await home.call("POST", "rooms", token: admin, body: #"{"structure":"\#(TestHome.structure.rawValue)","name":"Study"}"#).status < 300)
            for i in rooms.indices {
                var sawStudy = false
                while !sawStudy, let m = await rooms[i].next() {
                    if case .snapshot(_, _, .rooms(let list)) = m { sawStudy = list.contains { $0.name == "Study" } }
                }
                #expect(sawStudy, "rooms \(i) still gets changes after the lamp's subscription ended")
            }
            #expect(home.server.openWebSocketCount == 1)

            // Revoking the grant ends every remaining subscription with permissionDenied.
            #expect(try await home.call("DELETE", "grants/\(app.id)", token: admin).status == 204)
            // Each gets the word, as its own `end` or as the socket's `closing`, whichever the
            // server sent first: both say permissionDenied.
            func deniedLast(_ iterator: inout AsyncStream<WSServerMessage>.Iterator) async -> WSServerMessage? {
                var last: WSServerMessage?
                while let m = await iterator.next() { last = m }
                return last
            }
            func isDenied(_ m: WSServerMessage?) -> Bool {
                switch m {
                case .end(_, .permissionDenied, _): true
                case .closing(let e): e.code == .permissionDenied
                default: false
                }
            }
            let last = await deniedLast(&door)
            #expect(isDenied(last), "door ended with \(String(describing: last))")
            if case .end(let id, _, _) = last { #expect(id == "door") }
            for i in rooms.indices {
                let end = await deniedLast(&rooms[i])
                #expect(isDenied(end), "rooms \(i) ended with \(String(describing: end))")
            }
            #expect(try await sockets(home, become: 0))
        }
    }

    /// Waits (bounded: 10 s) until the core has `count` observers.
    func observers(_ home: TestHome, become count: Int) async throws -> Bool {
        for _ in 0..<500 {
            if home.core.observerCount == count { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return home.core.observerCount == count
    }

    @Test(.timeLimit(.minutes(1))) func aConsumerThatStops_unsubscribesAlone_andTheLastOneClosesTheSocket() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let client = HearthClient.Home(connection: HearthConnection(baseURL: home.baseURL, token: admin))
            let before = home.core.observerCount
            do {
                var keep = client.messages(.subscribe(id: "keep", .rooms(.batched))).makeAsyncIterator()
                do {
                    var drop = client.messages(.subscribe(id: "drop", .rooms(.batched))).makeAsyncIterator()
                    _ = await drop.next()
                    _ = await keep.next()
                    #expect(home.server.openWebSocketCount == 1)
                    #expect(home.core.observerCount == before + 2)
                }  // `drop` and its stream are gone: that subscription alone is cancelled on the server
                #expect(try await observers(home, become: before + 1))
                #expect(try await home.call("POST", "rooms", token: admin, body: #"{"structure":"\#(TestHome.structure.rawValue)","name":"Study"}"#).status < 300)
                guard case .snapshot("keep", _, .rooms(let list)) = await keep.next() else { Issue.record("keep got no change"); return }
                #expect(list.contains { $0.name == "Study" })
                #expect(home.server.openWebSocketCount == 1)
            }
            // The last subscription ended: the client closes its socket.
            #expect(try await sockets(home, become: 0))
            #expect(try await observers(home, become: before))
            // The next subscription opens a socket again.
            var again = client.messages(.subscribe(id: "again", .structures(.batched))).makeAsyncIterator()
            guard case .snapshot("again", _, _) = await again.next() else { Issue.record("no structures"); return }
            #expect(home.server.openWebSocketCount == 1)
        }
    }
}
