public import HomeModel
import Foundation

/// A plugin's section of `hearth.yaml`, as a value tree that remembers where each key stood.
public struct PluginConfiguration: Hashable, Sendable, Codable {
    /// The section's contents (`.object([:])` when the plugin has none).
    public let value: Value
    /// The file it came from, for messages.
    public let file: String
    /// The key path of the section inside the file, e.g. `plugins.gpio`.
    public let keyPath: String
    /// Line numbers (1-based) by key path relative to the section: `lines[2].role` → 14.
    public let lines: [String: Int]

    public init(value: Value = .object([:]), file: String = "hearth.yaml", keyPath: String = "", lines: [String: Int] = [:]) {
        self.value = value
        self.file = file
        self.keyPath = keyPath
        self.lines = lines
    }

    /// Decodes the section into the plugin's `Decodable` configuration type.
    ///
    /// - Throws: ``HomeError`` `invalidArgument` whose message names the file, line and key path
    ///   (`hearth.yaml:14: plugins.gpio.lines[2].role: …`).
    public func decode<T: Decodable>(_ type: T.Type) throws(HomeError) -> T {
        do {
            let data = try JSONEncoder().encode(value)
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw HomeError.invalidArgument(describe(error))
        } catch let error as HomeError {
            throw error
        } catch {
            throw HomeError.invalidArgument("\(file): \(keyPath): \(error)")
        }
    }

    /// A message for a problem at `path` (relative to the section): `file:line: key.path: problem`.
    public func problem(at path: String, _ message: String) -> String {
        let full = [keyPath, path].filter { !$0.isEmpty }.joined(separator: path.hasPrefix("[") ? "" : ".")
        let line = lines[path] ?? nearestLine(path)
        return "\(file)\(line.map { ":\($0)" } ?? ""): \(full.isEmpty ? "(top level)" : full): \(message)"
    }

    func nearestLine(_ path: String) -> Int? {
        var p = path
        while !p.isEmpty {
            if let l = lines[p] { return l }
            if let cut = p.lastIndex(where: { $0 == "." || $0 == "[" }) {
                p = String(p[..<cut])
            } else {
                p = ""
            }
        }
        return lines[""]
    }

    func describe(_ error: DecodingError) -> String {
        func pathString(_ codingPath: [any CodingKey]) -> String {
            var s = ""
            for key in codingPath {
                if let i = key.intValue {
                    s += "[\(i)]"
                } else {
                    s += s.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return s
        }
        switch error {
        case .keyNotFound(let key, let ctx):
            let parent = pathString(ctx.codingPath)
            return problem(at: parent, "missing required key '\(key.stringValue)'")
        case .typeMismatch(let type, let ctx):
            return problem(at: pathString(ctx.codingPath), "expected \(Self.typeName(type)); \(ctx.debugDescription)")
        case .valueNotFound(let type, let ctx):
            return problem(at: pathString(ctx.codingPath), "expected \(Self.typeName(type)), found nothing")
        case .dataCorrupted(let ctx):
            return problem(at: pathString(ctx.codingPath), ctx.debugDescription)
        @unknown default:
            return problem(at: "", "\(error)")
        }
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt32.Type, is UInt8.Type, is UInt16.Type: "an integer"
        case is Double.Type: "a number"
        default: "\(type)".contains("Array") ? "a list" : (("\(type)".contains("Dictionary")) ? "a mapping" : "\(type)")
        }
    }
}
