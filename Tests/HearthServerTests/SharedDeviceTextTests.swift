import Foundation
import HearthAPI
import HomeModel
import Synchronization
import Testing

@testable import HearthClient
@testable import HearthServer

/// The WebSocket fan-out's shortcuts: the server encodes each state of a device once and
/// splices it into every subscription's message; the client decodes a device once per socket.
/// Both must give exactly what the plain encoder and decoder give.
@Suite struct SharedDeviceTextTests {
    static func lamp(_ local: String = "lamp", on: Bool, name: String = "Lamp", level: Double? = nil) -> DeviceSnapshot {
        var attributes: [AttributeID: Value] = [OnOffTrait.Attribute.onOff: .bool(on)]
        if let level { attributes[0xF001] = .double(level) }
        return DeviceSnapshot(
            id: DeviceID(plugin: "demo", local: local), name: name, structureID: "structure-1", roomID: "room-1", commissioning: .commissioned,
            types: [
                DeviceTypeState(
                    id: OnOffLightDeviceType.identifier, isPrimary: true,
                    traits: [OnOffTrait.identifier: TraitState(id: OnOffTrait.identifier, attributes: attributes, sourceConnectivity: SourceConnectivity(connectivityState: .online))])
            ], manufacturer: "Acme", model: "L1")
    }

    static func encoded(_ m: WSServerMessage) throws -> String {
        String(decoding: try APIResponse.encoder.encode(m), as: UTF8.self)
    }

    /// Subscription IDs a client may choose (1 to 64 characters, anything printable or not).
    static let ids = ["s1", "devices#12", "a/b", #"quote " and \ backslash"#, "tab\tnew\nline\u{1}", "Küche 🔥", "</script>"]

    @Test func spliced_messages_are_the_bytes_the_encoder_writes() throws {
        let text = WebSocketText(devices: DeviceTextCache(catalog: .standard))
        let devices = [Self.lamp(on: false), Self.lamp("b", on: true, name: #"Desk "Lamp" \ 1/2"#, level: 0.25)]
        for id in Self.ids {
            for d in devices {
                let wire = WireDevice(d, catalog: .standard)
                #expect(try text.element(.added, id: id, d) == Self.encoded(.added(id: id, .device(wire))))
                #expect(try text.element(.updated, id: id, d) == Self.encoded(.updated(id: id, .device(wire))))
                #expect(try text.element(.device, id: id, d) == Self.encoded(.device(id: id, wire)))
            }
            let wires = devices.map { WireDevice($0, catalog: .standard) }
            #expect(try text.set(.snapshot, id: id, version: 42, devices) == Self.encoded(.snapshot(id: id, version: 42, .devices(wires))))
            #expect(try text.set(.snapshot, id: id, version: 0, []) == Self.encoded(.snapshot(id: id, version: 0, .devices([]))))
            #expect(try text.set(.changed, id: id, version: .max, devices) == Self.encoded(.changed(id: id, version: .max, devices: wires)))
        }
    }

    @Test func a_device_state_is_encoded_once_and_a_changed_one_again() throws {
        let cache = DeviceTextCache(catalog: .standard, capacity: 2, perDevice: 2)
        let off = Self.lamp(on: false)
        let first = try cache.text(off)
        #expect(try cache.text(off) == first)
        #expect(cache.entries.withLock { $0[off.id]?.map(\.snapshot) } == [off])
        // Another state of the same device (or another principal's view of it) is never served
        // the old text.
        let on = Self.lamp(on: true)
        let second = try cache.text(on)
        #expect(second != first)
        #expect(second == String(decoding: try APIResponse.encoder.encode(WireDevice(on, catalog: .standard)), as: UTF8.self))
        #expect(try cache.text(off) == first)
        #expect(cache.count == 2, "two recent states of the device")
        let dim = Self.lamp(on: true, level: 0.1)
        _ = try cache.text(dim)
        #expect(cache.entries.withLock { $0[off.id]?.map(\.snapshot) } == [on, dim], "the oldest state made room")
        // Bounded: a third device over the capacity of two starts the cache afresh.
        _ = try cache.text(Self.lamp("b", on: true))
        #expect(cache.entries.withLock { $0.count } == 2)
        _ = try cache.text(Self.lamp("c", on: true))
        #expect(cache.entries.withLock { $0.count } == 1)
        #expect(cache.count == 1)
    }

    static func messages() -> [WSServerMessage] {
        let lamp = WireDevice(Self.lamp(on: true, name: "Lamp \"1\"", level: 0.5), catalog: .standard)
        let room = RoomSnapshot(id: "room-1", structureID: "structure-1", name: "Kitchen")
        return Self.ids.flatMap { id -> [WSServerMessage] in
            [
                .added(id: id, .device(lamp)), .updated(id: id, .device(lamp)), .device(id: id, lamp), .updated(id: id, .room(room)),
                .snapshot(id: id, version: 3, .devices([lamp])), .changed(id: id, version: 4, devices: [lamp]), .removed(id: id, key: "demo:lamp"),
                .end(id: id, reason: .deviceRemoved, message: "gone"), .error(id: id, WireError(.notFound("no"))), .subscribed(id: id),
            ]
        } + [.closing(WireError(.permissionDenied("revoked"))), .pong(id: nil)]
    }

    @Test func the_reader_reads_what_the_decoder_reads() throws {
        var reader = ServerMessageReader(decoder: HearthConnection.decoder)
        for m in Self.messages() {
            let text = try Self.encoded(m)
            #expect(reader.read(text) == m, "\(text)")
            #expect(reader.read(text) == m, "again, from the recent devices: \(text)")
        }
        let device = try Self.encoded(.device(id: "x", WireDevice(Self.lamp(on: false), catalog: .standard)))
        let body = String(device.dropFirst().dropLast())
        // Any key order, white space, extra or repeated keys, escapes: the same as the decoder.
        let variants = [
            "{\"type\":\"updated\",\"id\":\"s\",\"device\":" + Self.field(device, "device") + "}",
            " \n{ \"id\" : \"s\" ,\r\n\t\"type\":\"added\", \"device\" :" + Self.field(device, "device") + " }\n",
            "{" + body + ",\"extra\":1}",
            "{" + body + ",\"id\":\"other\"}",
            "{" + body.replacingOccurrences(of: "\"id\":\"x\"", with: "\"id\":\"\\u0078\"") + "}",
            "{" + body.replacingOccurrences(of: "\"type\":\"device\"", with: "\"t\\u0079pe\":\"device\"") + "}",
            "{" + body.replacingOccurrences(of: "\"type\":\"device\"", with: "\"type\":\"devices\"") + "}",
            "{" + body.replacingOccurrences(of: "\"type\":\"device\"", with: "\"type\":\"changed\"") + "}",
            "{" + body.replacingOccurrences(of: "\"id\":\"x\"", with: "\"id\":7") + "}",
            "{\"type\":\"device\",\"id\":\"s\",\"device\":null}",
            "{\"type\":\"device\",\"id\":\"s\",\"device\":{}}",
            "{" + body + "}{}",
            "{" + body + ",}",
            "[" + body + "]",
            "{" + body,
            "",
        ]
        for text in variants {
            var fresh = ServerMessageReader(decoder: HearthConnection.decoder)
            let expected = try? HearthConnection.decoder.decode(WSServerMessage.self, from: Data(text.utf8))
            #expect(fresh.read(text) == expected, "\(text)")
            #expect(reader.read(text) == expected, "with recent devices: \(text)")
        }
    }

    /// The value text of a top-level member of an encoded message.
    static func field(_ text: String, _ key: String) -> String {
        let start = text.range(of: "\"\(key)\":")!.upperBound
        var depth = 0
        var i = start
        var inString = false
        while i < text.endIndex {
            let c = text[i]
            if inString {
                if c == "\\" { i = text.index(after: i) } else if c == "\"" { inString = false }
            } else if c == "\"" {
                inString = true
            } else if c == "{" || c == "[" {
                depth += 1
            } else if c == "}" || c == "]" {
                depth -= 1
                if depth == 0 { return String(text[start...i]) }
            }
            i = text.index(after: i)
        }
        return ""
    }

    /// Damaged messages (bytes changed, cut, repeated): the reader agrees with the decoder on
    /// every one, the shortcut included (its recent devices come from earlier messages).
    @Test func damaged_messages_are_read_as_the_decoder_reads_them() throws {
        var generator = SeededBytes(seed: 23)
        let texts = try Self.messages().map { Array(try Self.encoded($0).utf8) }
        var reader = ServerMessageReader(decoder: HearthConnection.decoder)
        let alphabet = Array("{}[]\",:\\ 0aetdvicpyu".utf8)
        var fast = 0
        for round in 0..<4000 {
            var bytes = texts[Int(generator.next() % UInt64(texts.count))]
            switch round % 4 {
            case 0: break
            case 1:
                for _ in 0..<(1 + generator.next() % 3) where !bytes.isEmpty {
                    bytes[Int(generator.next() % UInt64(bytes.count))] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                }
            case 2: bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count + 1))))
            default:
                let i = Int(generator.next() % UInt64(bytes.count))
                bytes.insert(contentsOf: bytes[i..<min(bytes.count, i + 1 + Int(generator.next() % 12))], at: i)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let expected = try? HearthConnection.decoder.decode(WSServerMessage.self, from: Data(text.utf8))
            var probe = reader
            if probe.readOneDevice(text) != nil { fast += 1 }
            #expect(reader.read(text) == expected, "\(text)")
        }
        #expect(fast > 100, "the shortcut was taken (\(fast) times; 155 with this seed)")
    }
}

extension ServerMessageReader {
    mutating func readOneDevice(_ text: String) -> WSServerMessage? {
        var text = text
        return text.withUTF8 { readOneDevice($0) }
    }
}

/// xorshift64*: seeded, so a failing case can be replayed.
struct SeededBytes: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed | 1 }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
}
