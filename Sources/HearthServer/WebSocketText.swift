import Foundation
import HearthAPI
import HomeModel
import Synchronization

/// The JSON text of devices on the WebSocket, encoded once per state of a device and shared by
/// every subscription that sends that state (on one socket or on many).
///
/// One change reaches each subscriber that sees the device as the same ``DeviceSnapshot``;
/// encoding it once makes the fan-out's cost per subscriber a copy of bytes instead of a run of
/// `JSONEncoder`. Subscribers drain at their own pace, so at one moment they send different
/// recent states of a device: a few are kept per device. An entry is reused only for a snapshot
/// equal to the one it was made from, so a principal whose view of the device differs never
/// gets another's text. Bounded: `perDevice` states of at most `capacity` devices (all are
/// dropped when a new device would exceed it).
final class DeviceTextCache: Sendable {
    struct Entry: Sendable {
        let snapshot: DeviceSnapshot
        let text: String
    }

    /// Recent states by device, newest last.
    let entries = Mutex<[DeviceID: [Entry]]>([:])
    let catalog: Catalog
    let capacity: Int
    let perDevice: Int

    init(catalog: Catalog, capacity: Int = 4096, perDevice: Int = 8) {
        self.catalog = catalog
        self.capacity = capacity
        self.perDevice = perDevice
    }

    /// The device's JSON, as `APIResponse.encoder` writes a ``WireDevice`` (through
    /// ``WireJSONWriter``: no `JSONEncoder` on this path).
    func text(_ snapshot: DeviceSnapshot) throws -> String {
        // Compared outside the lock: the lock only hands out and takes in entries.
        let recent = entries.withLock { $0[snapshot.id] } ?? []
        if let hit = recent.last(where: { $0.snapshot == snapshot }) { return hit.text }
        var writer = WireJSONWriter()
        writer.device(snapshot, catalog: catalog)
        let text = writer.text
        entries.withLock { e in
            if e.count >= capacity, e[snapshot.id] == nil { e.removeAll(keepingCapacity: true) }
            var states = e[snapshot.id] ?? []
            if states.count >= perDevice { states.removeFirst(states.count - perDevice + 1) }
            states.append(Entry(snapshot: snapshot, text: text))
            e[snapshot.id] = states
        }
        return text
    }

    /// How many device states are kept.
    var count: Int { entries.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// Server messages as the text written to the socket: the bytes `APIResponse.encoder` gives for
/// the ``WSServerMessage`` (sorted keys), a test checks. Messages that carry devices are put
/// together from each device's shared text (``DeviceTextCache``); the others are encoded.
struct WebSocketText: Sendable {
    let devices: DeviceTextCache

    /// Any message, through the encoder.
    static func text(_ message: WSServerMessage) throws -> String {
        String(decoding: try APIResponse.encoder.encode(message), as: UTF8.self)
    }

    /// `added`, `updated` or `device`: `{"device":…,"id":…,"type":…}`.
    func element(_ kind: WSServerMessage.Kind, id: String, _ device: DeviceSnapshot) throws -> String {
        precondition(kind == .added || kind == .updated || kind == .device, "\(kind) carries no single device")
        let d = try devices.text(device)
        let i = try Self.quoted(id)
        var out = ""
        out.reserveCapacity(d.utf8.count + i.utf8.count + 32)
        out += #"{"device":"#
        out += d
        out += #","id":"#
        out += i
        out += #","type":""#
        out += kind.rawValue
        out += #""}"#
        return out
    }

    /// `snapshot` (of devices) or `changed`: `{"devices":[…],"id":…,"type":…,"version":…}`.
    func set(_ kind: WSServerMessage.Kind, id: String, version: UInt64, _ set: [DeviceSnapshot]) throws -> String {
        precondition(kind == .snapshot || kind == .changed, "\(kind) carries no device list")
        let texts = try set.map { try devices.text($0) }
        let i = try Self.quoted(id)
        var out = ""
        out.reserveCapacity(texts.reduce(64 + i.utf8.count) { $0 + $1.utf8.count + 1 })
        out += #"{"devices":["#
        for (n, t) in texts.enumerated() {
            if n > 0 { out += "," }
            out += t
        }
        out += #"],"id":"#
        out += i
        out += #","type":""#
        out += kind.rawValue
        out += #"","version":"#
        out += String(version)
        out += "}"
        return out
    }

    /// `delta`: `{"changes":[…],"id":…,"type":"delta","version":…}`, each change an
    /// ``DeviceDelta`` (the attributes that changed, or the whole device with `full`).
    func delta(id: String, version: UInt64, _ changes: [(DeviceSnapshot, [AttributeChange]?)]) -> String {
        let devices = changes.map { (HomeDevice(snapshot: $0.0, backend: nil), $0.1) }
        return String(decoding: deltaBytes(id: id, version: version, devices), as: UTF8.self)
    }

    /// ``delta(id:version:_:)`` as UTF-8 bytes (what the socket's event loop writes).
    func deltaBytes(id: String, version: UInt64, _ changes: [(HomeDevice, [AttributeChange]?)]) -> [UInt8] {
        var w = WireJSONWriter(capacity: 128 + changes.count * 96)
        w.raw(#"{"changes":["#)
        for (n, (device, attributes)) in changes.enumerated() {
            if n > 0 { w.raw(",") }
            if let attributes {
                w.deviceDelta(device.id, attributes: attributes, full: nil, catalog: devices.catalog)
            } else {
                w.deviceDelta(device.id, attributes: [], full: device.snapshot, catalog: devices.catalog)
            }
        }
        w.raw(#"],"id":"#)
        w.string(id)
        w.raw(#","type":"delta","version":"#)
        w.int(version)
        w.raw("}")
        return w.bytes
    }

    /// A string as a JSON string literal, as the encoder writes it.
    static func quoted(_ s: String) throws -> String {
        // The encoder escapes control characters, `"`, `\` and `/`; anything else is copied.
        if s.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 != UInt8(ascii: "/") }) {
            return "\"" + s + "\""
        }
        return String(decoding: try APIResponse.encoder.encode(s), as: UTF8.self)
    }
}

extension WSServerMessage {
    /// `added` or `updated` for a set subscription's element.
    static func element(_ kind: Kind, id: String, _ e: SetElement) -> WSServerMessage {
        kind == .added ? .added(id: id, e) : .updated(id: id, e)
    }
}
