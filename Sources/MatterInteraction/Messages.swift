public import MatterTLV

/// One Interaction Model message: an anonymous TLV structure whose last member is
/// `InteractionModelRevision` (Matter Core Specification 10.6.1, 10.7).
public protocol InteractionMessage: Hashable, Sendable {
    static var opcode: InteractionOpcode { get }
    /// Decodes the message from its members (the anonymous structure).
    init(tlv: TLVElement) throws(TLVError)
    /// The message as an anonymous structure, `InteractionModelRevision` included.
    var tlv: TLVElement { get }
}

extension InteractionMessage {
    /// Decodes a message payload.
    public init(decoding bytes: [UInt8]) throws(TLVError) {
        let e = try TLVElement(decoding: bytes)
        guard e.tag == .anonymous else { throw TLVError(.invalidTag, "an IM message is an anonymous structure") }
        try self.init(tlv: e.structure())
    }

    /// The message payload.
    public func encoded() throws(TLVError) -> [UInt8] { try tlv.encoded() }
}

private func decodeArray<T>(_ s: TLVElement, _ n: UInt8, _ body: (TLVElement) throws(TLVError) -> T) throws(TLVError) -> [T]? {
    guard let items = try s.optionalArray(n) else { return nil }
    var out: [T] = []
    out.reserveCapacity(items.count)
    for item in items { out.append(try body(item)) }
    return out
}

/// StatusResponseMessage (10.7.1).
public struct StatusResponseMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.statusResponse
    public var status: InteractionStatus

    public init(_ status: InteractionStatus) { self.status = status }

    public init(tlv s: TLVElement) throws(TLVError) {
        status = InteractionStatus(try s.requiredUInt(0, as: UInt8.self))
    }

    public var tlv: TLVElement {
        var m = Members()
        m.uint(0, status.rawValue)
        m.revision()
        return .structure(m.items)
    }
}

/// ReadRequestMessage (10.7.2).
public struct ReadRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.readRequest
    public var attributeRequests: [AttributePath]?
    public var eventRequests: [EventPath]?
    public var eventFilters: [EventFilter]?
    public var isFabricFiltered: Bool
    public var dataVersionFilters: [DataVersionFilter]?

    public init(attributeRequests: [AttributePath]? = nil, eventRequests: [EventPath]? = nil, eventFilters: [EventFilter]? = nil,
                isFabricFiltered: Bool = true, dataVersionFilters: [DataVersionFilter]? = nil) {
        self.attributeRequests = attributeRequests
        self.eventRequests = eventRequests
        self.eventFilters = eventFilters
        self.isFabricFiltered = isFabricFiltered
        self.dataVersionFilters = dataVersionFilters
    }

    public init(tlv s: TLVElement) throws(TLVError) {
        attributeRequests = try decodeArray(s, 0) { e throws(TLVError) in try AttributePath(tlv: e) }
        eventRequests = try decodeArray(s, 1) { e throws(TLVError) in try EventPath(tlv: e) }
        eventFilters = try decodeArray(s, 2) { e throws(TLVError) in try EventFilter(tlv: e) }
        isFabricFiltered = try s.member(.context(3)).bool()
        dataVersionFilters = try decodeArray(s, 4) { e throws(TLVError) in try DataVersionFilter(tlv: e) }
    }

    public var tlv: TLVElement {
        var m = Members()
        m.array(0, attributeRequests?.map { $0.tlv() })
        m.array(1, eventRequests?.map { $0.tlv() })
        m.array(2, eventFilters?.map { $0.tlv() })
        m.bool(3, isFabricFiltered)
        m.array(4, dataVersionFilters?.map { $0.tlv() })
        m.revision()
        return .structure(m.items)
    }
}

/// SubscribeRequestMessage (10.7.3).
public struct SubscribeRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.subscribeRequest
    public var keepSubscriptions: Bool
    public var minIntervalFloor: UInt16
    public var maxIntervalCeiling: UInt16
    public var attributeRequests: [AttributePath]?
    public var eventRequests: [EventPath]?
    public var eventFilters: [EventFilter]?
    public var isFabricFiltered: Bool
    public var dataVersionFilters: [DataVersionFilter]?

    public init(keepSubscriptions: Bool = false, minIntervalFloor: UInt16, maxIntervalCeiling: UInt16,
                attributeRequests: [AttributePath]? = nil, eventRequests: [EventPath]? = nil, eventFilters: [EventFilter]? = nil,
                isFabricFiltered: Bool = true, dataVersionFilters: [DataVersionFilter]? = nil) {
        self.keepSubscriptions = keepSubscriptions
        self.minIntervalFloor = minIntervalFloor
        self.maxIntervalCeiling = maxIntervalCeiling
        self.attributeRequests = attributeRequests
        self.eventRequests = eventRequests
        self.eventFilters = eventFilters
        self.isFabricFiltered = isFabricFiltered
        self.dataVersionFilters = dataVersionFilters
    }

    public init(tlv s: TLVElement) throws(TLVError) {
        keepSubscriptions = try s.member(.context(0)).bool()
        minIntervalFloor = try s.requiredUInt(1, as: UInt16.self)
        maxIntervalCeiling = try s.requiredUInt(2, as: UInt16.self)
        attributeRequests = try decodeArray(s, 3) { e throws(TLVError) in try AttributePath(tlv: e) }
        eventRequests = try decodeArray(s, 4) { e throws(TLVError) in try EventPath(tlv: e) }
        eventFilters = try decodeArray(s, 5) { e throws(TLVError) in try EventFilter(tlv: e) }
        isFabricFiltered = try s.member(.context(7)).bool()
        dataVersionFilters = try decodeArray(s, 8) { e throws(TLVError) in try DataVersionFilter(tlv: e) }
    }

    public var tlv: TLVElement {
        var m = Members()
        m.bool(0, keepSubscriptions)
        m.uint(1, minIntervalFloor)
        m.uint(2, maxIntervalCeiling)
        m.array(3, attributeRequests?.map { $0.tlv() })
        m.array(4, eventRequests?.map { $0.tlv() })
        m.array(5, eventFilters?.map { $0.tlv() })
        m.bool(7, isFabricFiltered)
        m.array(8, dataVersionFilters?.map { $0.tlv() })
        m.revision()
        return .structure(m.items)
    }
}

/// SubscribeResponseMessage (10.7.4).
public struct SubscribeResponseMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.subscribeResponse
    public var subscriptionID: UInt32
    public var maxInterval: UInt16

    public init(subscriptionID: UInt32, maxInterval: UInt16) {
        self.subscriptionID = subscriptionID
        self.maxInterval = maxInterval
    }

    public init(tlv s: TLVElement) throws(TLVError) {
        subscriptionID = try s.requiredUInt(0, as: UInt32.self)
        maxInterval = try s.requiredUInt(2, as: UInt16.self)
    }

    public var tlv: TLVElement {
        var m = Members()
        m.uint(0, subscriptionID)
        m.uint(2, maxInterval)
        m.revision()
        return .structure(m.items)
    }
}

/// ReportDataMessage (10.7.5). Event reports are carried as opaque EventReportIBs.
public struct ReportDataMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.reportData
    public var subscriptionID: UInt32?
    public var attributeReports: [AttributeReport]?
    public var eventReports: [TLVElement]?
    public var moreChunkedMessages: Bool?
    public var suppressResponse: Bool?

    public init(subscriptionID: UInt32? = nil, attributeReports: [AttributeReport]? = nil, eventReports: [TLVElement]? = nil,
                moreChunkedMessages: Bool? = nil, suppressResponse: Bool? = nil) {
        self.subscriptionID = subscriptionID
        self.attributeReports = attributeReports
        self.eventReports = eventReports
        self.moreChunkedMessages = moreChunkedMessages
        self.suppressResponse = suppressResponse
    }

    public init(tlv s: TLVElement) throws(TLVError) {
        subscriptionID = try s.optionalUInt(0, as: UInt32.self)
        attributeReports = try decodeArray(s, 1) { e throws(TLVError) in try AttributeReport(tlv: e) }
        eventReports = try decodeArray(s, 2) { e throws(TLVError) in try e.structure() }
        moreChunkedMessages = try s.optionalBool(3)
        suppressResponse = try s.optionalBool(4)
    }

    public var tlv: TLVElement {
        var m = Members()
        m.uint(0, subscriptionID)
        m.array(1, attributeReports?.map { $0.tlv() })
        m.array(2, eventReports)
        m.bool(3, moreChunkedMessages)
        m.bool(4, suppressResponse)
        m.revision()
        return .structure(m.items)
    }
}

/// WriteRequestMessage (10.7.6).
public struct WriteRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.writeRequest
    public var suppressResponse: Bool?
    public var timedRequest: Bool
    public var writeRequests: [AttributeData]
    public var moreChunkedMessages: Bool?

    public init(writeRequests: [AttributeData], timedRequest: Bool = false, suppressResponse: Bool? = nil,
                moreChunkedMessages: Bool? = nil) {
        self.writeRequests = writeRequests
        self.timedRequest = timedRequest
        self.suppressResponse = suppressResponse
        self.moreChunkedMessages = moreChunkedMessages
    }

    public init(tlv s: TLVElement) throws(TLVError) {
        suppressResponse = try s.optionalBool(0)
        timedRequest = try s.member(.context(1)).bool()
        guard let writes = try decodeArray(s, 2, { e throws(TLVError) in try AttributeData(tlv: e) }) else {
            throw TLVError(.missingMember, "WriteRequests is missing")
        }
        writeRequests = writes
        moreChunkedMessages = try s.optionalBool(3)
    }

    public var tlv: TLVElement {
        var m = Members()
        m.bool(0, suppressResponse)
        m.bool(1, timedRequest)
        m.array(2, writeRequests.map { $0.tlv() })
        m.bool(3, moreChunkedMessages)
        m.revision()
        return .structure(m.items)
    }
}

/// WriteResponseMessage (10.7.7).
public struct WriteResponseMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.writeResponse
    public var writeResponses: [AttributeStatus]

    public init(writeResponses: [AttributeStatus]) { self.writeResponses = writeResponses }

    public init(tlv s: TLVElement) throws(TLVError) {
        writeResponses = try decodeArray(s, 0) { e throws(TLVError) in try AttributeStatus(tlv: e) } ?? []
    }

    public var tlv: TLVElement {
        var m = Members()
        m.array(0, writeResponses.map { $0.tlv() })
        m.revision()
        return .structure(m.items)
    }
}

/// InvokeRequestMessage (10.7.9).
public struct InvokeRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.invokeRequest
    public var suppressResponse: Bool
    public var timedRequest: Bool
    public var invokeRequests: [CommandData]

    public init(invokeRequests: [CommandData], timedRequest: Bool = false, suppressResponse: Bool = false) {
        self.invokeRequests = invokeRequests
        self.timedRequest = timedRequest
        self.suppressResponse = suppressResponse
    }

    public init(tlv s: TLVElement) throws(TLVError) {
        suppressResponse = try s.member(.context(0)).bool()
        timedRequest = try s.member(.context(1)).bool()
        guard let invokes = try decodeArray(s, 2, { e throws(TLVError) in try CommandData(tlv: e) }) else {
            throw TLVError(.missingMember, "InvokeRequests is missing")
        }
        invokeRequests = invokes
    }

    public var tlv: TLVElement {
        var m = Members()
        m.bool(0, suppressResponse)
        m.bool(1, timedRequest)
        m.array(2, invokeRequests.map { $0.tlv() })
        m.revision()
        return .structure(m.items)
    }
}

/// InvokeResponseMessage (10.7.10).
public struct InvokeResponseMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.invokeResponse
    public var suppressResponse: Bool
    public var invokeResponses: [InvokeResponse]
    public var moreChunkedMessages: Bool?

    public init(invokeResponses: [InvokeResponse], suppressResponse: Bool = false, moreChunkedMessages: Bool? = nil) {
        self.invokeResponses = invokeResponses
        self.suppressResponse = suppressResponse
        self.moreChunkedMessages = moreChunkedMessages
    }

    public init(tlv s: TLVElement) throws(TLVError) {
        suppressResponse = try s.member(.context(0)).bool()
        invokeResponses = try decodeArray(s, 1) { e throws(TLVError) in try InvokeResponse(tlv: e) } ?? []
        moreChunkedMessages = try s.optionalBool(2)
    }

    public var tlv: TLVElement {
        var m = Members()
        m.bool(0, suppressResponse)
        m.array(1, invokeResponses.map { $0.tlv() })
        m.bool(2, moreChunkedMessages)
        m.revision()
        return .structure(m.items)
    }
}

/// TimedRequestMessage (10.7.8): the next Write or Invoke on this exchange must arrive within
/// `timeout` milliseconds.
public struct TimedRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.timedRequest
    public var timeout: UInt16

    public init(timeout: UInt16) { self.timeout = timeout }

    public init(tlv s: TLVElement) throws(TLVError) {
        timeout = try s.requiredUInt(0, as: UInt16.self)
    }

    public var tlv: TLVElement {
        var m = Members()
        m.uint(0, timeout)
        m.revision()
        return .structure(m.items)
    }
}
