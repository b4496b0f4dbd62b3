import Foundation
import HearthAPI
import HomeModel
import Testing

/// The WebSocket protocol as one enum each way: the JSON shapes, the web page's table of
/// names, and attribute deltas.
@Suite struct WireProtocolTests {
    static let wireJS = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/HearthServer/Web/wire.js").standardizedFileURL

    /// The values of `export const NAME = Object.freeze({ a: "a", … })` in wire.js.
    static func table(_ name: String) throws -> [String: String] {
        let text = try String(contentsOf: wireJS, encoding: .utf8)
        guard let start = text.range(of: "export const \(name) = Object.freeze({"),
            let end = text.range(of: "});", range: start.upperBound..<text.endIndex)
        else { return [:] }
        var out: [String: String] = [:]
        for match in text[start.upperBound..<end.lowerBound].matches(of: /([A-Za-z]+): "([A-Za-z ]+)"/) {
            out[String(match.output.1)] = String(match.output.2)
        }
        return out
    }

    static func names<E: WireEnum>(_: E.Type) -> [String: String] {
        Dictionary(uniqueKeysWithValues: E.allCases.map { ("\($0)", $0.rawValue) })
    }

    @Test func the_web_pages_table_names_what_the_swift_enums_send() throws {
        #expect(try Self.table("MSG") == Self.names(WSServerMessage.Kind.self))
        #expect(try Self.table("SEND") == Self.names(WSClientMessage.Kind.self))
        #expect(try Self.table("QUERY") == Self.names(SubscriptionQuery.Name.self))
        #expect(try Self.table("MODE") == Self.names(SubscriptionMode.self))
        #expect(try Self.table("END") == Self.names(EndReason.self))
    }

    static func json(_ value: some Encodable) throws -> Value {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try JSONDecoder().decode(Value.self, from: encoder.encode(value))
    }

    @Test func client_messages_keep_their_json_shape_and_round_trip() throws {
        let messages: [(WSClientMessage, String)] = [
            (.subscribe(id: "s1", .devices(.stream)), #"{"id":"s1","mode":"stream","query":"devices","type":"subscribe"}"#),
            (.subscribe(id: "d", .device("demo:lamp")), #"{"device":"demo:lamp","id":"d","query":"device","type":"subscribe"}"#),
            (.subscribe(id: "t", .deviceUpdates), #"{"id":"t","query":"deviceUpdates","type":"subscribe"}"#),
            (.subscribe(id: "e", .events(device: nil, trait: .name("Switch"))), #"{"id":"e","query":"events","trait":"Switch","type":"subscribe"}"#),
            (.unsubscribe(id: "s1"), #"{"id":"s1","type":"unsubscribe"}"#),
            (.ping(id: "p"), #"{"id":"p","type":"ping"}"#),
        ]
        for (message, text) in messages {
            #expect(try Self.json(message) == JSONDecoder().decode(Value.self, from: Data(text.utf8)), "\(message)")
            #expect(try JSONDecoder().decode(WSClientMessage.self, from: Data(text.utf8)) == message)
        }
        // A subscription without a mode is batched, as before.
        #expect(
            try JSONDecoder().decode(WSClientMessage.self, from: Data(#"{"type":"subscribe","id":"r","query":"rooms"}"#.utf8))
                == .subscribe(id: "r", .rooms(.batched)))
    }

    /// Error codes are a closed set on the wire: every HomeError code the core throws has its
    /// case, an unknown code does not decode, and a foreign HomeError code goes out as `internal`.
    @Test func error_codes_are_a_closed_set_on_the_wire() throws {
        let homeCodes: [HomeError.Code] = [
            .permissionDenied, .notFound, .invalidArgument, .unsupportedOperation, .deviceOffline, .timeout, .conflict,
            .unauthenticated, .driverError, .rateLimited, .internal,
        ]
        for code in homeCodes {
            let wire = WireError(HomeError(code, "m"))
            #expect(wire.code.rawValue == code.rawValue)
            #expect(wire.homeError == HomeError(code, "m"))
        }
        #expect(Set(WireErrorCode.allCases.map(\.rawValue)) == Set(homeCodes.map(\.rawValue) + ["unreachable"]))

        let foreign = WireError(HomeError(HomeError.Code(rawValue: "quotaExceeded"), "too many scenes"))
        #expect(foreign.code == .internal)
        #expect(foreign.message == "quotaExceeded: too many scenes")

        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        let body = try sorted.encode(WireErrorBody(error: .permissionDenied("no")))
        #expect(String(decoding: body, as: UTF8.self) == #"{"error":{"code":"permissionDenied","message":"no"}}"#)
        #expect(try JSONDecoder().decode(WireErrorBody.self, from: body).error == WireError(code: .permissionDenied, message: "no"))
        let unknown = Data(#"{"error":{"code":"oops","message":"no"}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(WireErrorBody.self, from: unknown) }
    }

    @Test func server_messages_round_trip_through_json() throws {
        let room = RoomSnapshot(id: "room-1", structureID: "structure-1", name: "Kitchen")
        let messages: [WSServerMessage] = [
            .subscribed(id: "a"), .unsubscribed(id: "a"), .pong(id: nil),
            .snapshot(id: "r", version: 7, .rooms([room])), .added(id: "r", .room(room)), .removed(id: "r", key: "room-1"),
            .end(id: "d", reason: .deviceRemoved, message: "the device was removed"),
            .error(id: "x", WireError(.invalidArgument("no"))), .closing(WireError(.permissionDenied("revoked"))),
            .delta(id: "t", version: 9, changes: [DeviceDelta(device: "demo:lamp", attributes: [AttributeDelta(type: 0x0100, trait: 6, attribute: 0, value: .bool(true))])]),
        ]
        for m in messages {
            let data = try JSONEncoder().encode(m)
            #expect(try JSONDecoder().decode(WSServerMessage.self, from: data) == m)
            #expect(try Self.json(m)["type"]?.stringValue == m.kind.rawValue)
        }
        #expect(try Self.json(WSServerMessage.end(id: "d", reason: .permissionDenied, message: "revoked"))["reason"] == "permissionDenied")
    }

    static func lamp(on: Bool, name: String = "Lamp") -> WireDevice {
        let snapshot = DeviceSnapshot(
            id: "demo:lamp", name: name, structureID: nil, roomID: nil, commissioning: .commissioned,
            types: [
                DeviceTypeState(
                    id: OnOffLightDeviceType.identifier, isPrimary: true,
                    traits: [OnOffTrait.identifier: TraitState(id: OnOffTrait.identifier, attributes: [OnOffTrait.Attribute.onOff: .bool(on)])])
            ])
        return WireDevice(snapshot, catalog: .standard)
    }

    @Test func a_delta_carries_only_the_changed_attribute_and_applies_back() throws {
        let off = Self.lamp(on: false)
        let on = Self.lamp(on: true)
        let first = try #require(DeviceDelta.between(nil, off))
        #expect(first.full == off, "a device new to the subscription goes whole")
        #expect(DeviceDelta.between(off, off) == nil, "no change, no delta")
        let delta = try #require(DeviceDelta.between(off, on))
        #expect(delta.full == nil)
        #expect(delta.attributes == [AttributeDelta(type: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: .bool(true))])
        #expect(delta.applied(to: off) == on)
        #expect(delta.applied(to: nil) == nil, "a delta for a device the client lacks cannot apply")
        let renamed = try #require(DeviceDelta.between(on, Self.lamp(on: true, name: "Desk Lamp")))
        #expect(renamed.full?.name == "Desk Lamp", "anything but values goes whole")
    }
}
