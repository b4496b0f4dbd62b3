import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Testing

/// Subscriptions over a real WebSocket: snapshot first, then changes; several per socket,
/// each tagged with its own id; device and event subscriptions; unsubscribe; ping.
@Suite struct WebSocketTests {
    @Test func severalSubscriptionsOnOneSocket_eachGetSnapshotThenChanges() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            let member = try home.memberToken()
            try await SocketProbe.with(home, token: member) { socket in
                try await socket.send(#"{"type":"subscribe","id":"rooms","query":"rooms","mode":"stream"}"#)
                try await socket.send(#"{"type":"subscribe","id":"lamp","query":"device","device":"test:lamp"}"#)
                var firstRooms: Value?
                var firstLamp: Value?
                while firstRooms == nil || firstLamp == nil, let m = try await socket.next("snapshot", "device") {
                    if m["id"] == "rooms" { firstRooms = m } else if m["id"] == "lamp" { firstLamp = m }
                }
                #expect(firstRooms?["type"] == "snapshot")
                #expect(firstRooms?["rooms"]?.listValue?.compactMap { $0["name"]?.stringValue } == ["Living Room"])
                #expect(firstLamp?["device"]?["name"] == "Lamp")

                // A change to each: a new room (by the admin, over HTTP) and the lamp turned on.
                let created = try await home.call("POST", "rooms", token: admin, body: #"{"name":"Kitchen","structure":"structure-home"}"#)
                #expect(created.status == 201)
                let on = try await home.call(
                    "POST", "commands", token: member, body: #"{"device":"test:lamp","type":"OnOffLight","trait":"OnOff","command":"on"}"#)
                #expect(on.status == 200)

                var added: Value?
                var lampOn = false
                while added == nil || !lampOn, let m = try await socket.next("added", "device") {
                    if m["id"] == "rooms" { added = m }
                    if m["id"] == "lamp",
                        m["device"]?["types"]?.listValue?.first?["traits"]?.listValue?.first(where: { $0["id"] == 6 })?["attributes"]?
                            .listValue?.first?["value"] == .bool(true)
                    {
                        lampOn = true
                    }
                }
                #expect(added?["room"]?["name"] == "Kitchen")
                #expect(lampOn)

                try await socket.send(#"{"type":"unsubscribe","id":"rooms"}"#)
                #expect(try await socket.next("unsubscribed")?["id"] == "rooms")
                try await socket.send(#"{"type":"subscribe","id":"lamp","query":"devices"}"#)
                #expect(try await socket.next("error")?["error"]?["code"] == "conflict", "ids are unique per socket")
            }
        }
    }

    @Test func batchedDevices_sendsTheWholeSetOnEveryChange() async throws {
        try await TestHome.with { home in
            let admin = try home.adminToken()
            try await SocketProbe.with(home, token: admin) { socket in
                try await socket.send(#"{"type":"subscribe","id":"all","query":"devices","mode":"batched"}"#)
                let first = try await socket.next("snapshot")
                #expect(first?["devices"]?.listValue?.count == 3)
                let commissioned = try await home.call(
                    "POST", "devices/test:new-plug/commission", token: admin, body: #"{"name":"Desk Plug","structure":"structure-home"}"#)
                #expect(commissioned.status == 200, "\(commissioned.text)")
                let second = try await socket.next("snapshot")
                #expect(second?["devices"]?.listValue?.compactMap { $0["id"]?.stringValue } == ["test:door", "test:lamp", "test:lock", "test:new-plug"])
                #expect((second?["version"]?.intValue ?? 0) > (first?["version"]?.intValue ?? 0))
            }
        }
    }

    @Test func events_areDeliveredToSubscribers() async throws {
        try await TestHome.with { home in
            let member = try home.memberToken()
            try await SocketProbe.with(home, token: member) { socket in
                try await socket.send(#"{"type":"subscribe","id":"ev","query":"events"}"#)
                #expect(try await socket.next("subscribed")?["id"] == "ev")
                home.driver.context.emit(
                    EventReport(localID: "door", trait: BooleanStateTrait.identifier, event: EventID(0), fields: ["StateValue": .bool(false)]))
                let e = try await socket.next("event")
                #expect(e?["event"]?["device"] == "test:door")
                #expect(e?["event"]?["name"] == "StateChange")
            }
        }
    }

    /// More devices than a socket allows subscriptions, all live through one `deviceUpdates`.
    @Test func deviceUpdates_oneSubscriptionCoversMoreThan64Devices() async throws {
        try await TestHome.with { home in
            let sensors = 100
            for i in 0..<sensors {
                home.driver.context.publish(
                    DeviceDescription(
                        localID: "sensor-\(i)", name: "Sensor \(i)",
                        types: [
                            DeviceTypeDescription(
                                id: ContactSensorDeviceType.identifier, isPrimary: true,
                                traits: [IdentifyTrait.identifier: [:], BooleanStateTrait.identifier: [BooleanStateTrait.Attribute.stateValue: .bool(true)]])
                        ], commission: CommissionHint(name: "Sensor \(i)", room: "Living Room", structure: "Home")))
            }
            let member = try home.memberToken()
            try await SocketProbe.with(home, token: member) { socket in
                try await socket.send(#"{"type":"subscribe","id":"tiles","query":"deviceUpdates"}"#)
                #expect(try await socket.next("subscribed")?["id"] == "tiles")
                let first = try #require(try await socket.next("changed"))
                #expect(first["id"] == "tiles")
                let ids = first["devices"]?.listValue?.compactMap { $0["id"]?.stringValue } ?? []
                #expect(ids.count == sensors + 3, "every commissioned device, not the discovered plug")
                #expect(!ids.contains("test:new-plug"))

                // Every sensor reports; each one's tile must follow through the one subscription.
                for i in 0..<sensors {
                    home.driver.context.report("sensor-\(i)", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, false)
                }
                var open = Set((0..<sensors).map { "test:sensor-\($0)" })
                while !open.isEmpty, let m = try await socket.next("changed", "end", "error") {
                    #expect(m["type"] == "changed", "\(m)")
                    for d in m["devices"]?.listValue ?? [] {
                        let state = d["types"]?.listValue?.first?["traits"]?.listValue?
                            .first(where: { $0["id"]?.intValue == Int64(BooleanStateTrait.identifier.rawValue) })?["attributes"]?
                            .listValue?.first?["value"]
                        if state == .bool(false), let id = d["id"]?.stringValue { open.remove(id) }
                    }
                }
                #expect(open.isEmpty, "tiles left stale: \(open.sorted().prefix(5))")
            }
        }
    }

    /// A client that does not read while thousands of changes happen is not followed by an
    /// ever-growing queue: the server waits on the socket, the core's bounded buffer overflows
    /// into a fresh snapshot, and the client catches up with far fewer messages than changes.
    @Test func slowStreamClient_isResynced_insteadOfQueuedWithoutBound() async throws {
        try await TestHome.with { home in
            let member = try home.memberToken()
            let system = home.core.home(for: .system)
            let changes = 6_000
            try await SocketProbe.with(home, token: member) { socket in
                try await socket.send(#"{"type":"subscribe","id":"d","query":"devices","mode":"stream"}"#)
                #expect(try await socket.next("snapshot") != nil)
                // The client reads nothing while the lamp is renamed many times.
                for i in 0..<changes { try system.edit(.renameDevice(TestHome.lamp, name: i % 2 == 0 ? "Lamp A" : "Lamp B")) }
                try system.edit(.renameDevice(TestHome.lamp, name: "Final Lamp"))

                var messages = 0
                var resyncs = 0
                var caughtUp = false
                while !caughtUp, let m = try await socket.next() {
                    messages += 1
                    if m["type"] == "snapshot" {
                        resyncs += 1
                        caughtUp = m["devices"]?.listValue?.contains { $0["name"] == "Final Lamp" } == true
                    } else if m["type"] == "updated" {
                        caughtUp = m["device"]?["name"] == "Final Lamp"
                    }
                }
                #expect(caughtUp)
                // Either the backlog overflowed into a fresh snapshot (far fewer messages than
                // changes), or, on a machine where each rename's database write is slower than
                // sending its message, the server kept up and sent every change: never a queue
                // that grows without bound, never a change dropped without a resync.
                if resyncs >= 1 {
                    #expect(messages < changes, "\(messages) messages for \(changes) changes")
                } else {
                    #expect(messages >= changes, "no resync, yet only \(messages) messages for \(changes) changes")
                }
            }
        }
    }
}
