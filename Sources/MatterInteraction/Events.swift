public import MatterTLV
import Synchronization

/// An event's priority (Matter Core Specification 7.14.2.2).
public enum EventPriority: UInt8, Sendable, Comparable {
    case debug = 0, info = 1, critical = 2
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// The catalogue's spelling (`debug`, `info`, `critical`); info when unknown.
    public init(catalog name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "critical": self = .critical
        default: self = .info
        }
    }
}

/// One recorded event (7.14): where it happened, its number, priority, epoch timestamp and
/// its fields as a structure (context tags 0, 1, … in the order the cluster defines them).
public struct EventRecord: Hashable, Sendable {
    public var endpoint: UInt16
    public var cluster: UInt32
    public var event: UInt32
    /// The node-wide event number (7.14.2.1): increases with every event, across restarts.
    public var number: UInt64
    public var priority: EventPriority
    /// Milliseconds since the Unix epoch.
    public var epochTimestampMs: UInt64
    public var data: TLVElement

    public init(endpoint: UInt16, cluster: UInt32, event: UInt32, number: UInt64, priority: EventPriority, epochTimestampMs: UInt64,
                data: TLVElement) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.event = event
        self.number = number
        self.priority = priority
        self.epochTimestampMs = epochTimestampMs
        self.data = data
    }

    /// Whether a request's EventPathIB names this event (omitted members are wildcards).
    public func matches(_ path: EventPath) -> Bool {
        (path.endpoint ?? endpoint) == endpoint && (path.cluster ?? cluster) == cluster && (path.event ?? event) == event
    }

    public var path: EventPath { EventPath(endpoint: endpoint, cluster: cluster, event: event) }
}

/// EventDataIB (10.6.9) inside an EventReportIB (10.6.7, tag 1): the encoding a ReportData
/// carries; `init(tlv:)` reads one back (tests, a controller's view).
public struct EventReport: Hashable, Sendable {
    public var record: EventRecord

    public init(_ record: EventRecord) { self.record = record }

    public init(tlv e: TLVElement) throws(TLVError) {
        let d = try e.structure().member(.context(1)).structure()
        let path = try EventPath(tlv: d.member(.context(0)))
        guard let endpoint = path.endpoint, let cluster = path.cluster, let event = path.event else {
            throw TLVError(.missingMember, "EventDataIB's path is not concrete")
        }
        let priority = try d.requiredUInt(2, as: UInt8.self)
        guard let p = EventPriority(rawValue: priority) else { throw TLVError(.outOfRange, "event priority \(priority)") }
        guard let time = try d.optionalUInt(3, as: UInt64.self) else {
            throw TLVError(.missingMember, "EventDataIB has no EpochTimestamp")
        }
        record = EventRecord(endpoint: endpoint, cluster: cluster, event: event, number: try d.requiredUInt(1, as: UInt64.self),
                             priority: p, epochTimestampMs: time, data: TLVElement(.anonymous, try d.member(.context(7)).value))
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        let r = record
        let data: TLVElement = .structure(.context(1), [
            r.path.tlv(.context(0)),
            TLVElement(.context(1), .unsigned(r.number)),
            TLVElement(.context(2), .unsigned(UInt64(r.priority.rawValue))),
            TLVElement(.context(3), .unsigned(r.epochTimestampMs)),
            TLVElement(.context(7), r.data.value),
        ])
        return .structure(tag, [data])
    }
}

/// EventStatusIB (10.6.10) in an EventReportIB (tag 0): why a concrete event path of a request
/// yields nothing (UNSUPPORTED_ENDPOINT, UNSUPPORTED_CLUSTER, UNSUPPORTED_ACCESS, UNSUPPORTED_EVENT).
public struct EventStatus: Hashable, Sendable {
    public var path: EventPath
    public var status: StatusIB

    public init(path: EventPath, status: StatusIB) {
        self.path = path
        self.status = status
    }

    /// Reads the EventStatus of an EventReportIB.
    public init(report e: TLVElement) throws(TLVError) {
        let s = try e.structure().member(.context(0)).structure()
        path = try EventPath(tlv: s.member(.context(0)))
        status = try StatusIB(tlv: s.member(.context(1)))
    }

    /// The EventReportIB carrying it.
    public func report(_ tag: TLVTag = .anonymous) -> TLVElement {
        .structure(tag, [.structure(.context(0), [path.tlv(.context(0)), status.tlv(.context(1))])])
    }
}

/// The node's events (7.14): a bounded buffer of the newest events and the event number
/// counter. Numbers keep increasing across restarts: the owner persists an upper bound
/// (`reserve`) before any number at or above the previous bound is handed out, and a restart
/// starts from the stored bound (7.14.2.1: "SHALL … never decrease, even across reboots").
/// Thread-safe.
public final class EventLog: Sendable {
    private struct State {
        var events: [EventRecord] = []
        var next: UInt64
        var reserved: UInt64
        var reserve: (@Sendable (UInt64) -> Void)?
    }

    public let capacity: Int
    public let block: UInt64
    private let state: Mutex<State>

    /// - Parameters:
    ///   - start: the first event number (the bound the previous run stored; 1 on a new node).
    ///   - capacity: events kept for reads and new subscriptions (the oldest go first).
    ///   - block: how many numbers one stored bound covers.
    ///   - reserve: stores a new bound (called before a number at or above the old one is used);
    ///     nil: numbers are not kept (tests, a node without storage).
    public init(start: UInt64 = 1, capacity: Int = 256, block: UInt64 = 1000, reserve: (@Sendable (UInt64) -> Void)? = nil) {
        self.capacity = max(1, capacity)
        self.block = max(1, block)
        state = Mutex(State(next: max(start, 1), reserved: max(start, 1), reserve: reserve))
    }

    /// Continues from a stored bound and keeps the new bounds from now on (the owner of the
    /// node's storage calls it once at start, before the first event).
    public func persist(start: UInt64, reserve: @escaping @Sendable (UInt64) -> Void) {
        state.withLock { s in
            s.next = max(s.next, start, 1)
            s.reserved = s.next
            s.reserve = reserve
        }
    }

    /// The number the next event gets.
    public var nextNumber: UInt64 { state.withLock { $0.next } }

    /// Records an event and returns it with its number.
    @discardableResult
    public func record(endpoint: UInt16, cluster: UInt32, event: UInt32, priority: EventPriority, epochTimestampMs: UInt64,
                       data: TLVElement) -> EventRecord {
        state.withLock { s in
            if s.next >= s.reserved {
                // Stored before the number is used: a crash right after cannot reuse it.
                s.reserved = s.next &+ block
                s.reserve?(s.reserved)
            }
            let r = EventRecord(endpoint: endpoint, cluster: cluster, event: event, number: s.next, priority: priority,
                                epochTimestampMs: epochTimestampMs, data: TLVElement(.anonymous, data.value))
            s.next &+= 1
            s.events.append(r)
            if s.events.count > capacity { s.events.removeFirst(s.events.count - capacity) }
            return r
        }
    }

    /// The kept events numbered at least `min`, oldest first.
    public func events(from min: UInt64) -> [EventRecord] {
        state.withLock { s in s.events.filter { $0.number >= min } }
    }
}
