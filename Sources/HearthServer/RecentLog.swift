public import Foundation
public import Logging
import Synchronization

/// The daemon's most recent log lines, kept in memory for `GET /api/v1/logs` (the web page's
/// log view). A bounded ring: the oldest line goes when a new one comes past `capacity`.
public final class RecentLog: Sendable {
    public struct Entry: Codable, Sendable, Equatable {
        public let time: Date
        public let level: String
        public let label: String
        public let message: String
    }

    public let capacity: Int
    private let entries: Mutex<(lines: [Entry], next: Int)>

    public init(capacity: Int = 500) {
        self.capacity = max(1, capacity)
        entries = Mutex(([], 0))
    }

    public func append(_ entry: Entry) {
        entries.withLock { state in
            if state.lines.count < capacity {
                state.lines.append(entry)
            } else {
                state.lines[state.next] = entry
                state.next = (state.next + 1) % capacity
            }
        }
    }

    /// The last `limit` lines, oldest first.
    public func recent(_ limit: Int? = nil) -> [Entry] {
        let all = entries.withLock { Array($0.lines[$0.next...] + $0.lines[..<$0.next]) }
        guard let limit, limit < all.count else { return all }
        return Array(all.suffix(max(0, limit)))
    }

    /// A log handler that copies lines at or above its level into this log; combine it with the
    /// usual handler through `MultiplexLogHandler`.
    public func handler(label: String, level: Logger.Level) -> some LogHandler {
        RecentLogHandler(label: label, log: self, logLevel: level)
    }
}

struct RecentLogHandler: LogHandler {
    let label: String
    let log: RecentLog
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var text = "\(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        log.append(.init(time: Date(), level: event.level.rawValue, label: label, message: text))
    }
}
