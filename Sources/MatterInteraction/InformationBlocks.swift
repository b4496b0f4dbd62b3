public import MatterTLV

/// StatusIB (Matter Core Specification 10.6.17): a status and an optional cluster-specific status.
public struct StatusIB: Hashable, Sendable {
    public var status: InteractionStatus
    public var clusterStatus: UInt8?

    public init(_ status: InteractionStatus, clusterStatus: UInt8? = nil) {
        self.status = status
        self.clusterStatus = clusterStatus
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        status = InteractionStatus(try s.requiredUInt(0, as: UInt8.self))
        clusterStatus = try s.optionalUInt(1, as: UInt8.self)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.uint(0, status.rawValue)
        m.uint(1, clusterStatus)
        return .structure(tag, m.items)
    }
}

/// AttributeDataIB (10.6.4): a value at a path, with the cluster's data version.
public struct AttributeData: Hashable, Sendable {
    public var dataVersion: UInt32?
    public var path: AttributePath
    /// The value (its tag is rewritten to context 2 when encoded).
    public var data: TLVElement

    public init(path: AttributePath, data: TLVElement, dataVersion: UInt32? = nil) {
        self.path = path
        self.data = TLVElement(.anonymous, data.value)
        self.dataVersion = dataVersion
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        dataVersion = try s.optionalUInt(0, as: UInt32.self)
        path = try AttributePath(tlv: s.member(.context(1)))
        data = TLVElement(.anonymous, try s.member(.context(2)).value)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.uint(0, dataVersion)
        m.element(1, path.tlv())
        m.element(2, data)
        return .structure(tag, m.items)
    }
}

/// AttributeStatusIB (10.6.16): the status of one attribute path.
public struct AttributeStatus: Hashable, Sendable {
    public var path: AttributePath
    public var status: StatusIB

    public init(path: AttributePath, status: StatusIB) {
        self.path = path
        self.status = status
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        path = try AttributePath(tlv: s.member(.context(0)))
        status = try StatusIB(tlv: s.member(.context(1)))
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        .structure(tag, [path.tlv(.context(0)), status.tlv(.context(1))])
    }
}

/// AttributeReportIB (10.6.15): either a status or data.
public enum AttributeReport: Hashable, Sendable {
    case status(AttributeStatus)
    case data(AttributeData)

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        if let st = s[context: 0] {
            guard s[context: 1] == nil else { throw TLVError(.invalidTag, "AttributeReportIB with both status and data") }
            self = .status(try AttributeStatus(tlv: st))
        } else {
            self = .data(try AttributeData(tlv: s.member(.context(1))))
        }
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        switch self {
        case .status(let st): return .structure(tag, [st.tlv(.context(0))])
        case .data(let d): return .structure(tag, [d.tlv(.context(1))])
        }
    }
}

/// CommandDataIB (10.6.12): a command's path and fields (a structure), and the command
/// reference that pairs responses with requests in a batch.
public struct CommandData: Hashable, Sendable {
    public var path: CommandPath
    /// The CommandFields structure (nil when absent).
    public var fields: TLVElement?
    public var commandRef: UInt16?

    public init(path: CommandPath, fields: TLVElement? = nil, commandRef: UInt16? = nil) {
        self.path = path
        self.fields = fields.map { TLVElement(.anonymous, $0.value) }
        self.commandRef = commandRef
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        path = try CommandPath(tlv: s.member(.context(0)))
        fields = try s[context: 1].map { f throws(TLVError) in TLVElement(.anonymous, try f.structure().value) }
        commandRef = try s.optionalUInt(2, as: UInt16.self)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.element(0, path.tlv())
        m.element(1, fields)
        m.uint(2, commandRef)
        return .structure(tag, m.items)
    }
}

/// CommandStatusIB (10.6.14).
public struct CommandStatus: Hashable, Sendable {
    public var path: CommandPath
    public var status: StatusIB
    public var commandRef: UInt16?

    public init(path: CommandPath, status: StatusIB, commandRef: UInt16? = nil) {
        self.path = path
        self.status = status
        self.commandRef = commandRef
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        path = try CommandPath(tlv: s.member(.context(0)))
        status = try StatusIB(tlv: s.member(.context(1)))
        commandRef = try s.optionalUInt(2, as: UInt16.self)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.element(0, path.tlv())
        m.element(1, status.tlv())
        m.uint(2, commandRef)
        return .structure(tag, m.items)
    }
}

/// InvokeResponseIB (10.6.13): a response command, or a status.
public enum InvokeResponse: Hashable, Sendable {
    case command(CommandData)
    case status(CommandStatus)

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        if let c = s[context: 0] {
            guard s[context: 1] == nil else { throw TLVError(.invalidTag, "InvokeResponseIB with both command and status") }
            self = .command(try CommandData(tlv: c))
        } else {
            self = .status(try CommandStatus(tlv: s.member(.context(1))))
        }
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        switch self {
        case .command(let c): return .structure(tag, [c.tlv(.context(0))])
        case .status(let st): return .structure(tag, [st.tlv(.context(1))])
        }
    }
}

// A status is what a read returns instead of a value (`Result<TLVElement, StatusIB>`).
extension StatusIB: Error {}
extension AttributeStatus: Error {}
