/// Where a Matter node keeps what must survive a restart (Core Specification 11.18 fabrics and
/// keys, 9.10 ACL, 4.6.1 counters, 9.12 endpoint numbers). Storage implements it (HomeStorage's
/// `MatterStateStore` on SQLite); every save is one transaction.
public protocol MatterStore: Sendable {
    /// Fabrics (with NOCs and operational keys), the ACL and a pending fail-safe rollback;
    /// empty on a new node.
    func loadCommissioning() throws(MatterStoreError) -> PersistentCommissioning
    /// Replaces all of it at once.
    func saveCommissioning(_ state: PersistentCommissioning) throws(MatterStoreError)
    /// A persisted counter's stored limit (see ``PersistedCounter``), nil when never saved.
    func loadCounter(_ name: String) throws(MatterStoreError) -> UInt32?
    func saveCounter(_ name: String, _ value: UInt32) throws(MatterStoreError)
    /// The device ID → endpoint number map of bridged devices.
    func loadEndpoints() throws(MatterStoreError) -> EndpointMap
    func saveEndpoints(_ map: EndpointMap) throws(MatterStoreError)
}

/// A storage failure, with what went wrong in words.
public struct MatterStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A counter that must never repeat a value across restarts, persisted ahead of use: the store
/// holds a limit; values below it may have been used, so after a restart counting resumes at the
/// limit and a new limit `window` further on is stored before any value past it is handed out
/// (Core Specification 4.6.1.3, group message counters; the SDK's window is 1000).
public struct PersistedCounter: Hashable, Sendable {
    public static let defaultWindow: UInt32 = 1000

    public private(set) var next: UInt32
    /// Values up to (not including) this are covered by what the store holds.
    public private(set) var limit: UInt32
    public let window: UInt32

    /// - Parameters:
    ///   - stored: the limit the store held, nil on first use.
    ///   - initial: where a new counter starts (random for message counters).
    /// - Returns: the counter and the limit to store before the first value is used.
    public static func resume(stored: UInt32?, initial: UInt32, window: UInt32 = defaultWindow) -> (PersistedCounter, persist: UInt32) {
        let start = stored ?? initial
        let counter = PersistedCounter(next: start, limit: start &+ window, window: window)
        return (counter, counter.limit)
    }

    /// The next value; `persist` is a new limit the owner must store before using the value.
    /// Wraps modulo 2^32 as group counters do.
    public mutating func take() -> (value: UInt32, persist: UInt32?) {
        var persist: UInt32?
        if next == limit {
            limit = next &+ window
            persist = limit
        }
        defer { next = next &+ 1 }
        return (next, persist)
    }
}

/// Stable endpoint numbers for bridged devices (Core Specification 9.12.2: a dynamic endpoint's
/// number is not reused for another device until the numbers wrap).
public struct EndpointMap: Hashable, Sendable {
    public private(set) var endpoints: [String: UInt16]
    /// The next number to hand out.
    public private(set) var next: UInt16
    public let first: UInt16

    /// - Parameter first: the first dynamic endpoint (0 is the root node, 1 the Aggregator).
    public init(first: UInt16 = 2, endpoints: [String: UInt16] = [:], next: UInt16? = nil) {
        self.first = first
        self.endpoints = endpoints
        self.next = next ?? max(first, (endpoints.values.max() ?? first &- 1) &+ 1)
    }

    /// The device's endpoint, allocating a new number the first time.
    public mutating func endpoint(for deviceID: String) -> (endpoint: UInt16, isNew: Bool) {
        if let e = endpoints[deviceID] { return (e, false) }
        let used = Set(endpoints.values)
        var candidate = next
        for _ in 0..<Int(UInt16.max) {
            if candidate >= 0xFFFF || candidate < first { candidate = first }
            if !used.contains(candidate) { break }
            candidate &+= 1
        }
        endpoints[deviceID] = candidate
        next = candidate &+ 1
        return (candidate, true)
    }

    /// Forgets a device; its number is not handed out again until the numbers wrap.
    public mutating func remove(_ deviceID: String) { endpoints[deviceID] = nil }
}
