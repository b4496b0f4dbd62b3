import DriverAPI
import Foundation
import HearthAPI
import HearthServer
import HomeCore
import HomeModel
import Testing

/// `deviceDeltas` over a real WebSocket (issue 22): every change reaches a subscriber that
/// keeps up, in order; one that falls behind gets fewer messages but never ends on a stale
/// value; deltas applied to the first message's devices give the server's state. Serialized:
/// the floods of one test would starve another's socket under the full suite's load.
@Suite(.serialized) struct DeviceDeltaSocketTests {
    static let trait = TemperatureMeasurementTrait.identifier
    static let measured = TemperatureMeasurementTrait.Attribute.measuredValue

    static func publishThermometers(_ home: TestHome, count: Int) {
        for i in 0..<count {
            home.driver.context.publish(
                DeviceDescription(
                    localID: "thermo-\(i)", name: "Thermo \(i)",
                    types: [DeviceTypeDescription(id: TemperatureSensorDeviceType.identifier, isPrimary: true, traits: [trait: [measured: .int(0)]])],
                    commission: CommissionHint(name: "Thermo \(i)", room: "Living Room", structure: "Home")))
        }
    }

    /// Each thermometer's last value after `reports` reports round-robin (report `v` to
    /// `thermo-(v % count)`).
    static func finals(count: Int, reports: Int) -> [DeviceID: Int64] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { d in
            (DeviceID(plugin: "test", local: "thermo-\(d)"), Int64(reports - ((reports - d) % count)))
        })
    }

    /// A member's socket on a home whose four thermometers are reported round-robin as fast as
    /// the core takes them (at most 2,000,000 reports) while `body` runs.
    static func withChangingThermometers(_ body: @escaping @Sendable (inout SocketProbe) async throws -> Void) async throws {
        try await TestHome.with { home in
            let member = try home.memberToken()
            publishThermometers(home, count: 4)
            let reporting = Task.detached {
                var v: Int64 = 0
                while !Task.isCancelled, v < 2_000_000 {
                    v += 1
                    home.driver.context.report("thermo-\(v % 4)", Self.trait, Self.measured, .int(v))
                    if v % 64 == 0 { await Task.yield() }
                }
            }
            defer { reporting.cancel() }
            try await SocketProbe.with(home, token: member, body)
        }
    }

    /// Subscribes to `deviceDeltas` as `tiles` and applies the first message.
    static func subscribe(_ socket: inout SocketProbe) async throws -> Kept {
        try await socket.send(#"{"type":"subscribe","id":"tiles","query":"deviceDeltas"}"#)
        var kept = Kept()
        _ = try kept.apply(try #require(try await socket.next("delta")))
        return kept
    }

    /// A member's socket on a home with `count` thermometers beside the test devices.
    static func withThermometers(
        _ count: Int, configuration: HearthServer.Configuration = .init(host: "127.0.0.1", port: 0),
        _ body: @escaping @Sendable (TestHome, inout SocketProbe) async throws -> Void
    ) async throws {
        try await TestHome.with(configuration: configuration) { home in
            publishThermometers(home, count: count)
            let member = try home.memberToken()
            try await SocketProbe.with(home, token: member) { socket in try await body(home, &socket) }
        }
    }

    /// Reads deltas (each handed to `each` first) until every device of `finals` shows its
    /// value, expecting each device's values only to move forward.
    static func readUntil(
        _ finals: [DeviceID: Int64], _ socket: inout SocketProbe, _ kept: inout Kept, each: (Value) -> Void = { _ in }
    ) async throws {
        var last: [DeviceID: Int64] = [:]
        while finals.contains(where: { kept.devices[$0.key].flatMap(Kept.value) != $0.value }), let m = try await socket.next("delta") {
            each(m)
            for (id, v) in try kept.apply(m) {
                #expect(v > (last[id] ?? 0), "values of one device only move forward: \(id) \(last[id] ?? 0) → \(v)")
                last[id] = v
            }
        }
        for (id, v) in finals { #expect(kept.devices[id].flatMap(Kept.value) == v, "\(id) ends on its newest value") }
    }

    /// The client's side: the devices of the first message, then each delta applied.
    struct Kept {
        var devices: [DeviceID: WireDevice] = [:]
        var messages = 0

        /// Applies one `delta` message; the thermometers' values it carried, in message order.
        mutating func apply(_ text: Value) throws -> [(DeviceID, Int64)] {
            let data = try JSONEncoder().encode(text)
            guard case .delta(_, _, let changes) = try JSONDecoder().decode(WSServerMessage.self, from: data) else { return [] }
            messages += 1
            var values: [(DeviceID, Int64)] = []
            for change in changes {
                let d = try #require(change.applied(to: devices[change.device]), "a delta for a device the client does not have: \(change.device)")
                devices[change.device] = d
                if change.full == nil {
                    #expect(change.attributes.allSatisfy { $0.trait == trait }, "only what changed is sent")
                }
                if let v = Self.value(d) { values.append((d.id, v)) }
            }
            return values
        }

        static func value(_ d: WireDevice) -> Int64? {
            d.types.first?.traits.first(where: { $0.id == trait })?.attributes.first(where: { $0.id == measured })?.value.intValue
        }
    }

    @Test(.timeLimit(.minutes(1))) func every_change_reaches_a_subscriber_that_keeps_up_in_order() async throws {
        try await TestHome.with { home in
            Self.publishThermometers(home, count: 3)
            let member = try home.memberToken()
            try await SocketProbe.with(home, token: member) { socket in
                try await socket.send(#"{"type":"subscribe","id":"tiles","query":"deviceDeltas"}"#)
                var kept = Kept()
                let first = try #require(try await socket.next("delta"))
                _ = try kept.apply(first)
                #expect(kept.devices.count == 6, "the three thermometers and the three test devices, whole")
                for v in 1...200 {
                    let device = "thermo-\(v % 3)"
                    home.driver.context.report(device, Self.trait, Self.measured, .int(Int64(v)))
                    let m = try #require(try await socket.next("delta"))
                    let values = try kept.apply(m)
                    #expect(values.map { $0.0 } == [DeviceID(plugin: "test", local: device)] && values.map { $0.1 } == [Int64(v)], "change \(v): \(m)")
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func a_subscriber_that_falls_behind_coalesces_and_ends_on_the_newest_values() async throws {
        let count = 20
        try await Self.withThermometers(count) { home, socket in
            var kept = try await Self.subscribe(&socket)
            // A burst far faster than the client reads: 5,000 reports over 20 devices.
            let reports = 5_000
            for v in 1...reports {
                home.driver.context.report("thermo-\(v % count)", Self.trait, Self.measured, .int(Int64(v)))
            }
            let finals = Self.finals(count: count, reports: reports)
            try await Self.readUntil(finals, &socket, &kept)
            #expect(kept.messages < reports, "the core coalesced while the client was behind (\(kept.messages) messages)")
            // And the kept devices are what the server has.
            let system = home.core.home(for: .system)
            for id in finals.keys {
                let server = WireDevice(try system.currentDevice(id: id).snapshot, catalog: .standard)
                #expect(kept.devices[id] == server)
            }
        }
    }

    /// The socket's event loop writes the deltas itself (``WebSocketDirectDeltas``); the
    /// session's own replies go through the async writer. `subscribed` comes first, nothing
    /// follows `unsubscribed`, and a re-subscription under the same id starts afresh.
    @Test(.timeLimit(.minutes(1))) func replies_and_deltas_keep_their_order_while_devices_change() async throws {
        try await Self.withChangingThermometers { socket in
            for round in 1...20 {
                try await socket.send(#"{"type":"subscribe","id":"tiles","query":"deviceDeltas"}"#)
                let reply = try #require(try await socket.next())
                #expect(reply["type"]?.stringValue == "subscribed", "round \(round): the reply before any delta, got \(reply)")
                var kept = Kept()
                let first = try #require(try await socket.next("delta"))
                _ = try kept.apply(first)
                #expect(kept.devices.count == 7, "round \(round): a new subscription starts with every device, whole")
                try await socket.send(#"{"type":"unsubscribe","id":"tiles"}"#)
                while let m = try await socket.next(), m["type"]?.stringValue != "unsubscribed" {
                    #expect(m["type"]?.stringValue == "delta", "round \(round): \(m)")
                }
                try await socket.send(#"{"type":"ping","id":"after"}"#)
                let after = try #require(try await socket.next())
                #expect(after["type"]?.stringValue == "pong", "round \(round): nothing after unsubscribed, got \(after)")
            }
        }
    }

    /// Unsubscribing and subscribing again under the same id in one breath, while devices
    /// change: the old subscription's ending must not take the new one with it (it stays, and
    /// unsubscribes), and a write the old one was waiting on when it was cancelled must not
    /// silence the socket (it did: every later reply and message was dropped).
    /// (Its time limit is a hang guard: 5–8 s alone, past 60 s once under the full suite's load.)
    @Test(.timeLimit(.minutes(3))) func a_subscription_renewed_under_its_id_is_not_ended_by_the_old_one() async throws {
        try await Self.withChangingThermometers { socket in
            for query in ["deviceDeltas", "deviceUpdates"] {
                try await socket.send(#"{"type":"subscribe","id":"tiles","query":"\#(query)"}"#)
                _ = try #require(try await socket.next("subscribed"))
                for round in 1...25 {
                    // Both frames at once: the old task ends while the new one is being set up.
                    try await socket.send(#"{"type":"unsubscribe","id":"tiles"}"#)
                    try await socket.send(#"{"type":"subscribe","id":"tiles","query":"\#(query)"}"#)
                    var seen: [String] = []
                    while let m = try await socket.next(), let type = m["type"]?.stringValue {
                        #expect(type != "end" && type != "error", "\(query) round \(round): \(m)")
                        seen.append(type)
                        if type == "subscribed" { break }
                    }
                    #expect(seen.contains("unsubscribed"), "\(query) round \(round): \(seen)")
                    // Let a late ending of the old subscription run before the next round.
                    try await socket.send(#"{"type":"ping","id":"p\#(round)"}"#)
                    while let m = try await socket.next(), m["type"]?.stringValue != "pong" {
                        #expect(m["type"]?.stringValue != "end" && m["type"]?.stringValue != "error", "\(query) round \(round): \(m)")
                    }
                }
                try await socket.send(#"{"type":"unsubscribe","id":"tiles"}"#)
                while let m = try await socket.next(), m["type"]?.stringValue != "unsubscribed" {
                    #expect(m["type"]?.stringValue != "end" && m["type"]?.stringValue != "error", "\(query): the last subscription is still there: \(m)")
                    if m["type"]?.stringValue == "error" { break }
                }
            }
        }
    }

    /// A client that stops reading for a while: what the loop wrote waits in the socket (or, once
    /// the buffer is full, the core coalesces), and once the client reads it ends on the newest
    /// values and the socket still answers.
    @Test(.timeLimit(.minutes(2))) func a_client_that_stops_reading_for_a_while_catches_up_on_the_newest_values() async throws {
        try await TestHome.with { home in
            let count = 400
            Self.publishThermometers(home, count: count)
            let member = try home.memberToken()
            try await SocketProbe.with(home, token: member) { socket in
                var kept = try await Self.subscribe(&socket)
                // Bursts of 400 changes (some 36 KB a message) while nothing is read, then the
                // reads: the loop writes while the socket takes it and waits when it is full.
                let reports = 8_000
                for v in 1...reports {
                    home.driver.context.report("thermo-\(v % count)", Self.trait, Self.measured, .int(Int64(v)))
                    if v % count == 0 { try await Task.sleep(for: .milliseconds(2)) }
                }
                let finals = Self.finals(count: count, reports: reports)
                while finals.contains(where: { kept.devices[$0.key].flatMap(Kept.value) != $0.value }), let m = try await socket.next("delta") {
                    _ = try kept.apply(m)
                }
                for (id, v) in finals { #expect(kept.devices[id].flatMap(Kept.value) == v, "\(id) ends on its newest value") }
                try await socket.send(#"{"type":"ping","id":"alive"}"#)
                #expect(try await socket.next("pong") != nil, "the socket still answers")
            }
        }
    }

    /// Under a flood the loop paces its frames: a frame of 64 changes or more is followed by a
    /// rest of 20 ms, so n such frames span at least (n − 1) × 20 ms from the subscription on
    /// (each is sent after the previous one's rest, and received after it is sent); the client
    /// still ends on every device's newest value, each device's values moving only forward.
    @Test(.timeLimit(.minutes(2))) func a_flood_is_paced_and_still_ends_on_the_newest_values() async throws {
        let count = 100
        try await Self.withThermometers(count) { home, socket in
            let start = ContinuousClock.now
            // The first message carries every device whole: more than 64 changes, a busy frame.
            var kept = try await Self.subscribe(&socket)
            #expect(kept.devices.count >= 64)
            var busy = 1
            let reports = 10_000  // (MeasuredValue is an int16)
            let flood = Task.detached {
                for v in 1...reports {
                    home.driver.context.report("thermo-\(v % count)", Self.trait, Self.measured, .int(Int64(v)))
                    if v % 64 == 0 { await Task.yield() }
                }
            }
            try await Self.readUntil(Self.finals(count: count, reports: reports), &socket, &kept) { m in
                if case .list(let changes)? = m["changes"], changes.count >= DeviceDeltaPacing.standard.busyFrame { busy += 1 }
            }
            let elapsed = ContinuousClock.now - start
            await flood.value
            #expect(busy >= 2, "the flood made busy frames beside the first (\(busy))")
            #expect(elapsed >= DeviceDeltaPacing.standard.rest * (busy - 1), "\(busy) busy frames in \(elapsed): not paced")
        }
    }

    /// The rest itself, made long enough to see: the first message (every device whole, more
    /// than 64) is a busy frame, so the change reported right after it goes out only once the
    /// rest has passed — at least 600 ms after the subscription was sent, whatever the load —
    /// and the client ends on the newest of the three values reported for the device.
    @Test(.timeLimit(.minutes(1))) func after_a_busy_frame_the_next_waits_the_rest_and_carries_the_newest_value() async throws {
        var configuration = HearthServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.deltaPacing = DeviceDeltaPacing(busyFrame: 64, rest: .milliseconds(600))
        try await Self.withThermometers(100, configuration: configuration) { home, socket in
            let start = ContinuousClock.now
            var kept = try await Self.subscribe(&socket)
            #expect(kept.devices.count >= 64, "the first message is a busy frame")
            for v in 1...3 { home.driver.context.report("thermo-7", Self.trait, Self.measured, .int(Int64(v))) }
            let thermo = DeviceID(plugin: "test", local: "thermo-7")
            var next: ContinuousClock.Instant?
            while kept.devices[thermo].flatMap(Kept.value) != 3, let m = try await socket.next("delta") {
                next = next ?? ContinuousClock.now
                _ = try kept.apply(m)
            }
            let waited = try #require(next) - start
            #expect(waited >= .milliseconds(600), "the frame after a busy one came \(waited) after subscribing: no rest")
            #expect(kept.devices[thermo].flatMap(Kept.value) == 3)
        }
    }
}
