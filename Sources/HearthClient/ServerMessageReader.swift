import Foundation
import HearthAPI
import HomeModel

/// Reads the server's messages on one socket, decoding each device once however many
/// subscriptions on the socket receive it.
///
/// Every change to a device reaches each subscription that sees it (a client's `devices`
/// streams, a `device(id:)` subscription on it…) as a message of its own, with the same device
/// and another subscription `id`. The messages that carry one device (`added`, `updated`,
/// `device`) are therefore read by a scan of the object's top level: when the device's bytes
/// equal those of one decoded lately, that device is reused; only new bytes go through
/// `JSONDecoder`. Anything else — other types, other or repeated keys, escapes in a key, `type`
/// or `id` — is decoded as a whole, so the result is always what
/// `decoder.decode(WSServerMessage.self, …)` gives.
struct ServerMessageReader {
    let decoder: JSONDecoder
    /// Devices decoded lately, by their exact JSON bytes (newest last).
    var recent: [(bytes: [UInt8], device: WireDevice)] = []
    /// How many devices ``recent`` keeps (the messages of one change can interleave with the next's).
    let capacity: Int

    init(decoder: JSONDecoder, capacity: Int = 8) {
        self.decoder = decoder
        self.capacity = capacity
    }

    /// The message, or nil when the text is not one.
    mutating func read(_ text: String) -> WSServerMessage? {
        var text = text
        if let fast = text.withUTF8({ readOneDevice($0) }) { return fast }
        return try? decoder.decode(WSServerMessage.self, from: Data(text.utf8))
    }

    /// `{"device":{…},"id":"…","type":"added|updated|device"}` in any key order and spacing,
    /// or nil (the caller decodes the whole message).
    mutating func readOneDevice(_ b: UnsafeBufferPointer<UInt8>) -> WSServerMessage? {
        guard let members = JSONTopLevel.members(b, limit: 3), members.count == 3 else { return nil }
        var type: String?
        var id: String?
        var device: Range<Int>?
        for (key, value) in members {
            // Each of the three keys once, spelled without escapes, with a value of its kind.
            guard let name = JSONTopLevel.plainString(b, key) else { return nil }
            switch name {
            case "type" where type == nil:
                guard let v = JSONTopLevel.plainString(b, value) else { return nil }
                type = v
            case "id" where id == nil:
                guard let v = JSONTopLevel.plainString(b, value) else { return nil }
                id = v
            case "device" where device == nil:
                guard b[value.lowerBound] == UInt8(ascii: "{") else { return nil }
                device = value
            default:
                return nil
            }
        }
        guard let type, let id, let device, let kind = WSServerMessage.Kind(rawValue: type) else { return nil }
        guard kind == .added || kind == .updated || kind == .device, let d = self.device(b, device) else { return nil }
        switch kind {
        case .added: return .added(id: id, .device(d))
        case .updated: return .updated(id: id, .device(d))
        default: return .device(id: id, d)
        }
    }

    /// The device in `b[range]`: a recent one with the same bytes, or decoded.
    mutating func device(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> WireDevice? {
        let bytes = UnsafeBufferPointer(rebasing: b[range])
        if let hit = recent.lastIndex(where: { $0.bytes.count == bytes.count && $0.bytes.withUnsafeBufferPointer { $0.elementsEqual(bytes) } }) {
            return recent[hit].device
        }
        guard let d = try? decoder.decode(WireDevice.self, from: Data(buffer: bytes)) else { return nil }
        if recent.count >= capacity { recent.removeFirst() }
        recent.append((Array(bytes), d))
        return d
    }
}

/// A scan of a JSON object's top level that finds where each member's key and value lie
/// without decoding them. It checks the structure it walks (strings closed, brackets
/// balanced, commas and colons in place) but not the contents of nested values, which whoever
/// uses them decodes.
enum JSONTopLevel {
    /// Each member's key (with its quotes) and value ranges, or nil when `b` is not one object
    /// followed by nothing but white space, or has more than `limit` members.
    static func members(_ b: UnsafeBufferPointer<UInt8>, limit: Int) -> [(key: Range<Int>, value: Range<Int>)]? {
        var i = skipSpace(b, 0)
        guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
        i = skipSpace(b, i + 1)
        var out: [(key: Range<Int>, value: Range<Int>)] = []
        if i < b.count, b[i] == UInt8(ascii: "}") {
            return skipSpace(b, i + 1) == b.count ? out : nil
        }
        while true {
            guard out.count < limit, i < b.count, b[i] == UInt8(ascii: "\""), let keyEnd = skipString(b, i) else { return nil }
            let key = i..<keyEnd
            i = skipSpace(b, keyEnd)
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            i = skipSpace(b, i + 1)
            guard let valueEnd = skipValue(b, i) else { return nil }
            out.append((key, i..<valueEnd))
            i = skipSpace(b, valueEnd)
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: "}") { return skipSpace(b, i + 1) == b.count ? out : nil }
            guard b[i] == UInt8(ascii: ",") else { return nil }
            i = skipSpace(b, i + 1)
        }
    }

    /// The text of a string literal at `range` that has no escapes and no control characters;
    /// nil otherwise (or when it is not a string).
    static func plainString(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        guard range.count >= 2, b[range.lowerBound] == UInt8(ascii: "\""), b[range.upperBound - 1] == UInt8(ascii: "\"") else { return nil }
        let inner = UnsafeBufferPointer(rebasing: b[(range.lowerBound + 1)..<(range.upperBound - 1)])
        guard inner.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\\") && $0 != UInt8(ascii: "\"") }) else { return nil }
        return String(validating: inner, as: UTF8.self)
    }

    static func skipSpace(_ b: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var i = start
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        return i
    }

    /// The end of the string literal starting at `start` (a quote), or nil when it is not closed.
    static func skipString(_ b: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        var i = start + 1
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "\""): return i + 1
            case UInt8(ascii: "\\"): i += 2
            default: i += 1
            }
        }
        return nil
    }

    /// The end of the value starting at `start`, or nil.
    static func skipValue(_ b: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        guard start < b.count else { return nil }
        switch b[start] {
        case UInt8(ascii: "\""):
            return skipString(b, start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var closers: [UInt8] = []
            var i = start
            while i < b.count {
                switch b[i] {
                case UInt8(ascii: "\""):
                    guard let end = skipString(b, i) else { return nil }
                    i = end
                    continue
                case UInt8(ascii: "{"): closers.append(UInt8(ascii: "}"))
                case UInt8(ascii: "["): closers.append(UInt8(ascii: "]"))
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard closers.popLast() == b[i] else { return nil }
                    if closers.isEmpty { return i + 1 }
                default: break
                }
                i += 1
            }
            return nil
        default:
            // A number or literal: up to the next delimiter.
            var i = start
            while i < b.count, !",}] \n\r\t".utf8.contains(b[i]) { i += 1 }
            return i > start ? i : nil
        }
    }
}
