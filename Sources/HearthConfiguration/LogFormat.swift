/// `log.format` in hearth.yaml: how each log line is written to standard error.
public enum LogFormat: String, CaseIterable, Sendable {
    /// swift-log's default lines (timestamp, level, label, message, metadata).
    case text
    /// One logfmt line: `level=info label=hearth.plugin plugin=mqtt msg="connected"`.
    case keyvalue
    /// One JSON object a line: `{"label":"…","level":"info","msg":"…","plugin":"mqtt"}`.
    case json
}
