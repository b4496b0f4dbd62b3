import Foundation
import HearthConfiguration
import Logging
import Synchronization

/// Writes one line per message to standard error in `keyvalue` or `json` form, journald-friendly:
/// under systemd (`$JOURNAL_STREAM` set) each line starts with its syslog priority (`<6>`) and
/// carries no timestamp, since the journal stamps lines itself.
struct StructuredLogHandler: LogHandler {
    let label: String
    let format: LogFormat
    let journal: Bool
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// One lock for every handler, so lines from several threads never interleave.
    static let output = Mutex<Void>(())

    init(label: String, format: LogFormat, journal: Bool = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil) {
        self.label = label
        self.format = format
        self.journal = journal
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let line = Self.render(
            format: format, level: event.level, label: label, message: "\(event.message)", metadata: merged, timestamp: journal ? nil : Date())
        let data = Data(((journal ? "<\(Self.priority(event.level))>" : "") + line + "\n").utf8)
        Self.output.withLock { _ in FileHandle.standardError.write(data) }
    }

    /// syslog priorities, as journald reads them from a `<N>` prefix.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    static func render(
        format: LogFormat, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, timestamp: Date?
    ) -> String {
        var fields: [(String, String)] = []
        if let timestamp { fields.append(("time", timestamp.formatted(.iso8601))) }
        fields.append(("level", level.rawValue))
        fields.append(("label", label))
        fields.append(("msg", message))
        for key in metadata.keys.sorted() where !["time", "level", "label", "msg"].contains(key) {
            fields.append((key, "\(metadata[key]!)"))
        }
        switch format {
        case .json:
            let body = fields.map { "\(jsonString($0.0)):\(jsonString($0.1))" }.joined(separator: ",")
            return "{\(body)}"
        case .keyvalue, .text:
            return fields.map { "\($0.0)=\(logfmtValue($0.1))" }.joined(separator: " ")
        }
    }

    static func logfmtValue(_ s: String) -> String {
        let needsQuotes = s.isEmpty || s.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.isNewline }
        guard needsQuotes else { return s }
        return jsonString(s)
    }

    static func jsonString(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
