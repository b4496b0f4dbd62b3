import Foundation
import HearthAPI
import HomeModel
import TestSupport
import Testing

@testable import HearthServer

/// The hand-written JSON of the WebSocket's hot path (``WireJSONWriter``) against the Codable
/// types: over random devices and random changes, what it writes decodes to exactly what the
/// encoder's text decodes to.
@Suite struct WireJSONWriterTests {
    /// Seeded (TestSupport's SplitMix64), so a failure repeats.
    typealias Rng = SplitMix

    static let texts = ["", "Lamp", #"Desk "Lamp" \ 1/2"#, "tab\tnew\nline\u{1}\u{1F}", "Küche 🔥", "</script>", "a\u{7F}b", "\u{8}\u{C}\r"]

    static func string(_ r: inout Rng) -> String { texts[Int(r.next() % UInt64(texts.count))] }

    static func value(_ r: inout Rng, depth: Int = 0) -> Value {
        switch r.next() % (depth > 2 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(r.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: r.next()) >> Int64(r.next() % 64))
        case 3:
            let choices: [Double] = [0, -0.0, 0.25, 1, 2.5, -49.99, 1e-5, 1.5e300, 123456789.125, Double(Int64(bitPattern: r.next())) / 1000]
            return .double(choices[Int(r.next() % UInt64(choices.count))])
        case 4: return .string(string(&r))
        case 5: return .list((0..<Int(r.next() % 4)).map { _ in value(&r, depth: depth + 1) })
        default:
            var o: [String: Value] = [:]
            for _ in 0..<Int(r.next() % 4) { o[string(&r) + String(r.next() % 3)] = value(&r, depth: depth + 1) }
            return .object(o)
        }
    }

    /// Traits and attributes the catalogue knows (names and units) and some it does not.
    static let traits: [TraitID] = [0x0006, 0x0008, 0x0402, 0x0405, 0x0045, 0xFFF1_FC01]
    static let types: [DeviceTypeID] = [0x0100, 0x0302, 0x0015, 0xFFF1_0001]
    static let connectivity: [SourceConnectivity] = [
        SourceConnectivity(connectivityState: .online), SourceConnectivity(connectivityState: .offline, dataSourceLocality: .remote), .unknown,
    ]

    static func device(_ r: inout Rng) -> DeviceSnapshot {
        var types: [DeviceTypeState] = []
        for (n, t) in Self.types.shuffled(using: &r).prefix(1 + Int(r.next() % 2)).enumerated() {
            var traits: [TraitID: TraitState] = [:]
            for trait in Self.traits.shuffled(using: &r).prefix(1 + Int(r.next() % 3)) {
                var attributes: [AttributeID: Value] = [:]
                for a in 0..<Int(r.next() % 4) { attributes[AttributeID(UInt32(a) * UInt32(1 + r.next() % 3))] = value(&r) }
                traits[trait] = TraitState(id: trait, attributes: attributes, sourceConnectivity: connectivity[Int(r.next() % 3)])
            }
            types.append(DeviceTypeState(id: t, isPrimary: n == 0 && r.next() % 3 != 0, traits: traits))
        }
        func maybe(_ r: inout Rng) -> String? { r.next() % 2 == 0 ? nil : string(&r) }
        return DeviceSnapshot(
            id: DeviceID(plugin: "mqtt", local: "d" + string(&r)), name: string(&r),
            structureID: maybe(&r).map { StructureID(rawValue: $0) }, roomID: maybe(&r).map { RoomID(rawValue: $0) },
            commissioning: r.next() % 2 == 0 ? .commissioned : .discovered, types: types, manufacturer: maybe(&r), model: maybe(&r),
            suggestedRoom: maybe(&r))
    }

    /// `d` with some attribute values changed and, now and then, something else (a name, a
    /// trait's connectivity, an attribute added) so the whole device must be sent.
    static func changed(_ d: DeviceSnapshot, _ r: inout Rng) -> DeviceSnapshot {
        var d = d
        for t in d.types.indices {
            for id in d.types[t].traits.keys.sorted() {
                for a in d.types[t].traits[id]!.attributes.keys.sorted() where r.next() % 2 == 0 {
                    d.types[t].traits[id]!.attributes[a] = value(&r)
                }
            }
        }
        switch r.next() % 8 {
        case 0: d.name += "x"
        case 1: if let id = d.types.first?.traits.keys.first { d.types[0].traits[id]!.sourceConnectivity = connectivity[Int(r.next() % 3)] }
        case 2: if let id = d.types.first?.traits.keys.first { d.types[0].traits[id]!.attributes[0x77] = .int(1) }
        default: break
        }
        return d
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    @Test func integers_are_their_decimal_text() {
        var r = Rng(seed: 7)
        var values: [Int64] = [0, 9, 10, -1, -9, -10, 99, 100, 1_000_000, .max, .min, .max - 1, .min + 1]
        for _ in 0..<2_000 { values.append(Int64(bitPattern: r.next()) >> Int64(r.next() % 64)) }
        for v in values {
            var w = WireJSONWriter()
            w.int(v)
            #expect(w.text == String(v))
        }
        for v: UInt64 in [0, 10, .max] {
            var w = WireJSONWriter()
            w.int(v)
            #expect(w.text == String(v))
        }
        var w = WireJSONWriter()
        w.raw("[")
        w.int(Int32(-123))
        w.raw(",")
        w.int(UInt8(255))
        #expect(w.text == "[-123,255", "digits go after what is there")
    }

    @Test func a_device_decodes_as_the_encoder_writes_it() throws {
        var r = Rng(seed: 22)
        for _ in 0..<500 {
            let d = Self.device(&r)
            var w = WireJSONWriter()
            w.device(d, catalog: .standard)
            let encoded = String(decoding: try APIResponse.encoder.encode(WireDevice(d, catalog: .standard)), as: UTF8.self)
            #expect(try Self.decode(WireDevice.self, w.text) == Self.decode(WireDevice.self, encoded), "\(w.text)\n\(encoded)")
        }
    }

    @Test func a_device_without_odd_numbers_is_the_encoders_bytes() throws {
        // Integers, strings, booleans and plain decimals: byte for byte what the encoder writes.
        let d = DeviceSnapshot(
            id: "mqtt:t1", name: #"Desk "Lamp" \ 1/2 Küche 🔥"#, structureID: "s", roomID: "r", commissioning: .commissioned,
            types: [
                DeviceTypeState(
                    id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                    traits: [
                        TemperatureMeasurementTrait.identifier: TraitState(
                            id: TemperatureMeasurementTrait.identifier, attributes: [0: .int(2137), 1: .int(-5000), 2: .null],
                            sourceConnectivity: SourceConnectivity(connectivityState: .online)),
                        0xFFF1_FC01: TraitState(id: 0xFFF1_FC01, attributes: [0: .double(0.25), 1: .object(["b": .list([.bool(true), "x\n"]), "a": 1])], sourceConnectivity: .unknown),
                    ])
            ], manufacturer: "Acme", suggestedRoom: "Garden")
        var w = WireJSONWriter()
        w.device(d, catalog: .standard)
        #expect(w.text == String(decoding: try APIResponse.encoder.encode(WireDevice(d, catalog: .standard)), as: UTF8.self))
    }

    /// Snapshots whose dictionaries were built apart (another order, another capacity) compare
    /// by key like copies do: `attributeChanges` walks copies side by side and must look keys
    /// up where the orders part.
    @Test func dictionaries_in_another_order_compare_by_key() {
        let traitIDs: [TraitID] = [0x0402, 0x0028, 0x002F, 0x0405, 0xFFF1_FC01, 0x0006]
        func trait(_ t: TraitID, bump: Bool) -> TraitState {
            var attributes: [AttributeID: Value] = [:]
            for a in (0..<6).map({ AttributeID(rawValue: $0) }) { attributes[a] = .int(Int64(t.rawValue) + Int64(a.rawValue)) }
            if bump { attributes[3] = .string("changed") }
            return TraitState(id: t, attributes: attributes, sourceConnectivity: SourceConnectivity(connectivityState: .online))
        }
        func device(_ order: [TraitID], bumping: Set<TraitID>, capacity: Int) -> DeviceSnapshot {
            var traits = [TraitID: TraitState](minimumCapacity: capacity)
            for t in order { traits[t] = trait(t, bump: bumping.contains(t)) }
            return DeviceSnapshot(id: "mqtt:x", name: "X", types: [DeviceTypeState(id: 0x0302, isPrimary: true, traits: traits)])
        }
        let old = device(traitIDs, bumping: [], capacity: 0)
        let same = device(traitIDs.reversed(), bumping: [], capacity: 100)
        #expect(same.attributeChanges(since: old) == [])
        let new = device(traitIDs.reversed(), bumping: [0x0405, 0x0028], capacity: 100)
        #expect(new.attributeChanges(since: old) == [
            AttributeChange(type: 0x0302, trait: 0x0028, attribute: 3, value: "changed"),
            AttributeChange(type: 0x0302, trait: 0x0405, attribute: 3, value: "changed"),
        ])
        // A key the old state lacks (same count) is a change of shape.
        var other = device(traitIDs, bumping: [], capacity: 0)
        other.types[0].traits[0x0006] = nil
        other.types[0].traits[0x0008] = trait(0x0008, bump: false)
        #expect(other.attributeChanges(since: old) == nil)
    }

    /// The `delta` message made from two snapshots decodes to the message the Codable types
    /// give for ``DeviceDelta/between(_:_:)`` on the same devices.
    @Test func a_delta_decodes_as_DeviceDelta_between_gives_it() throws {
        var r = Rng(seed: 2222)
        let text = WebSocketText(devices: DeviceTextCache(catalog: .standard))
        for round in 0..<500 {
            let old = Self.device(&r)
            let new = Self.changed(old, &r)
            let expected = DeviceDelta.between(WireDevice(old, catalog: .standard), WireDevice(new, catalog: .standard))
            let attributes = new.attributeChanges(since: old)
            if attributes?.isEmpty == true {
                #expect(expected == nil, "no change: no delta (round \(round))")
                continue
            }
            let written = text.delta(id: "tiles", version: UInt64(round), [(new, attributes)])
            let message = try Self.decode(WSServerMessage.self, written)
            let wanted = WSServerMessage.delta(id: "tiles", version: UInt64(round), changes: expected.map { [$0] } ?? [])
            // Round trip the expectation through the encoder too: a `.double(2)` reads back as `.int(2)`.
            let wantedDecoded = try Self.decode(WSServerMessage.self, String(decoding: try APIResponse.encoder.encode(wanted), as: UTF8.self))
            #expect(message == wantedDecoded, "round \(round): \(written)")
            // And a client applying it to what it had gets the new device.
            if case .delta(_, _, let changes) = message, let change = changes.first {
                let had = try Self.decode(WireDevice.self, String(decoding: try APIResponse.encoder.encode(WireDevice(old, catalog: .standard)), as: UTF8.self))
                let now = try Self.decode(WireDevice.self, String(decoding: try APIResponse.encoder.encode(WireDevice(new, catalog: .standard)), as: UTF8.self))
                #expect(change.applied(to: had) == now, "round \(round)")
            }
        }
    }

    @Test func the_first_delta_carries_whole_devices() throws {
        let text = WebSocketText(devices: DeviceTextCache(catalog: .standard))
        var r = Rng(seed: 7)
        let devices = (0..<3).map { _ in Self.device(&r) }
        let message = try Self.decode(WSServerMessage.self, text.delta(id: "a/\"b\"", version: 9, devices.map { ($0, nil) }))
        let wanted = WSServerMessage.delta(
            id: "a/\"b\"", version: 9, changes: devices.map { DeviceDelta(device: $0.id, full: WireDevice($0, catalog: .standard)) })
        #expect(message == (try Self.decode(WSServerMessage.self, String(decoding: try APIResponse.encoder.encode(wanted), as: UTF8.self))))
        #expect(try Self.decode(WSServerMessage.self, text.delta(id: "x", version: 0, [])) == .delta(id: "x", version: 0, changes: []))
    }
}
