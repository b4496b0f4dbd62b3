import MatterTLV

/// What one ReportData message carries.
struct ReportChunk: Sendable, Equatable {
    var attributes: [AttributeReport] = []
    var events: [EventRecord] = []
    /// Statuses of concrete event paths (first chunk only: a few bytes each).
    var eventStatuses: [EventStatus] = []

    /// The ReportData's EventReports: the statuses, then the events; nil when none.
    var eventReports: [TLVElement]? {
        let all = eventStatuses.map { $0.report() } + events.map { EventReport($0).tlv() }
        return all.isEmpty ? nil : all
    }
}

/// Splits attribute reports (then event reports) into ReportData messages that fit the message size (Matter Core
/// Specification 8.4.3.3 "Chunking"): reports are packed in order; a list attribute too large
/// for one message is sent as an empty list followed by one append (null ListIndex) per item.
struct ReportChunker {
    /// What a ReportData message costs around its reports (structure, subscription ID,
    /// array, MoreChunkedMessages, SuppressResponse, revision).
    static let envelope = 24

    let maxPayload: Int

    /// The attribute reports, then the events, in chunks (an event too large for a message is
    /// dropped: the largest bridged event is a few dozen bytes).
    func chunks(_ reports: [AttributeReport], events: [EventRecord], statuses: [EventStatus] = []) -> [ReportChunk] {
        let budget = maxPayload - Self.envelope
        var out = chunks(reports).map { ReportChunk(attributes: $0) }
        if !statuses.isEmpty {
            // A status is ~20 bytes: they go with the first message (a request has few paths).
            let size = statuses.reduce(0) { $0 + ((try? $1.report().encoded().count) ?? 0) }
            if (out[0].attributes.reduce(0) { $0 + Self.size($1) }) + size > budget { out.insert(ReportChunk(), at: 0) }
            out[0].eventStatuses = statuses
        }
        guard !events.isEmpty else { return out }
        var used = out.last.map { $0.attributes.reduce(0) { $0 + Self.size($1) } + $0.eventStatuses.reduce(0) { $0 + ((try? $1.report().encoded().count) ?? 0) } } ?? 0
        for event in events {
            let size = (try? EventReport(event).tlv().encoded().count) ?? Int.max / 2
            guard size <= budget else { continue }
            if used + size > budget {
                out.append(ReportChunk())
                used = 0
            }
            out[out.count - 1].events.append(event)
            used += size
        }
        return out
    }

    /// The reports in chunks; an item that can never fit becomes a RESOURCE_EXHAUSTED status.
    func chunks(_ reports: [AttributeReport]) -> [[AttributeReport]] {
        let budget = maxPayload - Self.envelope
        var units: [(AttributeReport, Int)] = []
        for report in reports {
            let size = Self.size(report)
            if size <= budget {
                units.append((report, size))
            } else {
                units += split(report, budget: budget).map { ($0, Self.size($0)) }
            }
        }
        var chunks: [[AttributeReport]] = []
        var current: [AttributeReport] = []
        var used = 0
        for (report, size) in units {
            if used + size > budget, !current.isEmpty {
                chunks.append(current)
                current = []
                used = 0
            }
            current.append(report)
            used += size
        }
        if !current.isEmpty || chunks.isEmpty { chunks.append(current) }
        return chunks
    }

    private func split(_ report: AttributeReport, budget: Int) -> [AttributeReport] {
        guard case .data(let d) = report, case .array(let items) = d.data.value else { return [tooLarge(report)] }
        var empty = d
        empty.data = TLVElement(.array([]))
        var out: [AttributeReport] = [.data(empty)]
        for item in items {
            var path = d.path
            path.listIndex = .append
            let one = AttributeReport.data(AttributeData(path: path, data: item, dataVersion: d.dataVersion))
            out.append(Self.size(one) <= budget ? one : tooLarge(report))
        }
        return out
    }

    private func tooLarge(_ report: AttributeReport) -> AttributeReport {
        let path: AttributePath
        switch report {
        case .data(let d): path = d.path
        case .status(let s): path = s.path
        }
        return .status(AttributeStatus(path: path, status: StatusIB(.resourceExhausted)))
    }

    static func size(_ report: AttributeReport) -> Int {
        (try? report.tlv().encoded().count) ?? Int.max / 2
    }
}
