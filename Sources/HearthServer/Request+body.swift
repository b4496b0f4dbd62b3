import Foundation
import HearthAPI
import HomeModel
import Hummingbird

extension Request {
    /// Decodes a JSON body strictly: at most `limit` bytes, an object, only known keys, the
    /// right types. Every failure is `invalidArgument` (413 for a body over the limit) with a
    /// message that names the key.
    func decodeStrict<T: WireRequest>(_ type: T.Type, limit: Int) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: limit)
        } catch let e as any HTTPResponseError where e.status == .contentTooLarge {
            throw APIError(.invalidArgument("the request body is larger than \(limit) bytes"), status: .contentTooLarge)
        }
        return try Self.decodeStrict(type, from: Data(buffer.readableBytesView))
    }

    static func decodeStrict<T: WireRequest>(_ type: T.Type, from data: Data) throws -> T {
        guard !data.isEmpty else { throw HomeError.invalidArgument("the request needs a JSON object body") }
        let value: Value
        do {
            value = try JSONDecoder().decode(Value.self, from: data)
        } catch {
            throw HomeError.invalidArgument("the body is not valid JSON")
        }
        guard let object = value.objectValue else {
            throw HomeError.invalidArgument("the body must be a JSON object, not a \(value.kindName)")
        }
        let unknown = Set(object.keys).subtracting(T.keys).sorted()
        if !unknown.isEmpty {
            throw HomeError.invalidArgument(
                "unknown field\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")) "
                    + "(allowed: \(T.keys.sorted().joined(separator: ", ")))")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, _) {
            throw HomeError.invalidArgument("missing field '\(key.stringValue)'")
        } catch let DecodingError.typeMismatch(expected, context) {
            throw HomeError.invalidArgument("field '\(Self.path(context.codingPath))' has the wrong type (expected \(Self.kind(expected)))")
        } catch let DecodingError.valueNotFound(expected, context) {
            throw HomeError.invalidArgument("field '\(Self.path(context.codingPath))' must not be null (expected \(Self.kind(expected)))")
        } catch let DecodingError.dataCorrupted(context) {
            throw HomeError.invalidArgument("field '\(Self.path(context.codingPath))': \(context.debugDescription)")
        } catch {
            throw HomeError.invalidArgument("the body does not match the request: \(error)")
        }
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is UInt32.Type, is Double.Type: "a number"
        default: "\(type)"
        }
    }
}
