import MatterTLV

/// Sigma1 (Core Specification 4.14.2.3): the initiator's random, session ID, destination ID,
/// ephemeral key and, to resume, a resumption ID with its MIC.
public struct Sigma1: Hashable, Sendable {
    public var initiatorRandom: [UInt8]
    public var initiatorSessionID: UInt16
    public var destinationID: [UInt8]
    public var initiatorEphemeralKey: [UInt8]
    public var sessionParameters: SessionParameters?
    public var resumptionID: [UInt8]?
    public var initiatorResumeMIC: [UInt8]?

    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        var m: [TLVElement] = [
            .init(.context(1), .bytes(initiatorRandom)), .init(.context(2), .unsigned(UInt64(initiatorSessionID))),
            .init(.context(3), .bytes(destinationID)), .init(.context(4), .bytes(initiatorEphemeralKey)),
        ]
        if let sessionParameters { m.append(sessionParameters.element(.context(5))) }
        if let resumptionID, let initiatorResumeMIC {
            m.append(.init(.context(6), .bytes(resumptionID)))
            m.append(.init(.context(7), .bytes(initiatorResumeMIC)))
        }
        return try tlv { () throws(TLVError) in try TLVElement.structure(m).encoded() }
    }

    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        let s = try TLVElement.decodeStructure(bytes, "Sigma1")
        initiatorRandom = try s.octets(1, length: 32)
        initiatorSessionID = try tlv { () throws(TLVError) in try s.member(.context(2)).uint(as: UInt16.self) }
        destinationID = try s.octets(3, length: 32)
        initiatorEphemeralKey = try s.octets(4, length: 65)
        sessionParameters = try s[context: 5].map { e throws(MatterSecurityError) in try SessionParameters(e) }
        if s[context: 6] != nil || s[context: 7] != nil {
            resumptionID = try s.octets(6, length: 16)
            initiatorResumeMIC = try s.octets(7, length: 16)
        }
    }

    init(initiatorRandom: [UInt8], initiatorSessionID: UInt16, destinationID: [UInt8], initiatorEphemeralKey: [UInt8],
         sessionParameters: SessionParameters?, resumptionID: [UInt8]?, initiatorResumeMIC: [UInt8]?) {
        self.initiatorRandom = initiatorRandom
        self.initiatorSessionID = initiatorSessionID
        self.destinationID = destinationID
        self.initiatorEphemeralKey = initiatorEphemeralKey
        self.sessionParameters = sessionParameters
        self.resumptionID = resumptionID
        self.initiatorResumeMIC = initiatorResumeMIC
    }
}

/// Sigma2: the responder's random, session ID, ephemeral key and encrypted TBEData2.
public struct Sigma2: Hashable, Sendable {
    public var responderRandom: [UInt8]
    public var responderSessionID: UInt16
    public var responderEphemeralKey: [UInt8]
    public var encrypted2: [UInt8]
    public var sessionParameters: SessionParameters?

    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        var m: [TLVElement] = [
            .init(.context(1), .bytes(responderRandom)), .init(.context(2), .unsigned(UInt64(responderSessionID))),
            .init(.context(3), .bytes(responderEphemeralKey)), .init(.context(4), .bytes(encrypted2)),
        ]
        if let sessionParameters { m.append(sessionParameters.element(.context(5))) }
        return try tlv { () throws(TLVError) in try TLVElement.structure(m).encoded() }
    }

    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        let s = try TLVElement.decodeStructure(bytes, "Sigma2")
        responderRandom = try s.octets(1, length: 32)
        responderSessionID = try tlv { () throws(TLVError) in try s.member(.context(2)).uint(as: UInt16.self) }
        responderEphemeralKey = try s.octets(3, length: 65)
        encrypted2 = try s.octets(4)
        sessionParameters = try s[context: 5].map { e throws(MatterSecurityError) in try SessionParameters(e) }
    }

    init(responderRandom: [UInt8], responderSessionID: UInt16, responderEphemeralKey: [UInt8], encrypted2: [UInt8],
         sessionParameters: SessionParameters?) {
        self.responderRandom = responderRandom
        self.responderSessionID = responderSessionID
        self.responderEphemeralKey = responderEphemeralKey
        self.encrypted2 = encrypted2
        self.sessionParameters = sessionParameters
    }
}

/// Sigma2_Resume: the new resumption ID, its MIC and the responder's session ID.
public struct Sigma2Resume: Hashable, Sendable {
    public var resumptionID: [UInt8]
    public var sigma2ResumeMIC: [UInt8]
    public var responderSessionID: UInt16

    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        try tlv { () throws(TLVError) in
            try TLVElement.structure([
                .init(.context(1), .bytes(resumptionID)), .init(.context(2), .bytes(sigma2ResumeMIC)),
                .init(.context(3), .unsigned(UInt64(responderSessionID))),
            ]).encoded()
        }
    }

    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        let s = try TLVElement.decodeStructure(bytes, "Sigma2_Resume")
        resumptionID = try s.octets(1, length: 16)
        sigma2ResumeMIC = try s.octets(2, length: 16)
        responderSessionID = try tlv { () throws(TLVError) in try s.member(.context(3)).uint(as: UInt16.self) }
    }

    init(resumptionID: [UInt8], sigma2ResumeMIC: [UInt8], responderSessionID: UInt16) {
        self.resumptionID = resumptionID
        self.sigma2ResumeMIC = sigma2ResumeMIC
        self.responderSessionID = responderSessionID
    }
}

/// The signed and the encrypted parts of Sigma2 and Sigma3 (TBSData2/3, TBEData2/3).
enum SigmaData {
    /// TBSData: NOC [1], ICAC [2]?, own ephemeral key [3], peer's ephemeral key [4].
    static func tbs(noc: [UInt8], icac: [UInt8]?, ownKey: [UInt8], peerKey: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        var m: [TLVElement] = [.init(.context(1), .bytes(noc))]
        if let icac { m.append(.init(.context(2), .bytes(icac))) }
        m.append(.init(.context(3), .bytes(ownKey)))
        m.append(.init(.context(4), .bytes(peerKey)))
        return try tlv { () throws(TLVError) in try TLVElement.structure(m).encoded() }
    }

    /// TBEData: NOC [1], ICAC [2]?, signature [3], resumption ID [4] (Sigma2 only).
    static func tbe(noc: [UInt8], icac: [UInt8]?, signature: [UInt8], resumptionID: [UInt8]?) throws(MatterSecurityError) -> [UInt8] {
        var m: [TLVElement] = [.init(.context(1), .bytes(noc))]
        if let icac { m.append(.init(.context(2), .bytes(icac))) }
        m.append(.init(.context(3), .bytes(signature)))
        if let resumptionID { m.append(.init(.context(4), .bytes(resumptionID))) }
        return try tlv { () throws(TLVError) in try TLVElement.structure(m).encoded() }
    }

    static func decodeTBE(_ bytes: [UInt8], withResumption: Bool) throws(MatterSecurityError)
        -> (noc: [UInt8], icac: [UInt8]?, signature: [UInt8], resumptionID: [UInt8]?)
    {
        let s = try TLVElement.decodeStructure(bytes, "TBEData")
        let noc = try s.octets(1)
        var icac: [UInt8]?
        if s[context: 2] != nil { icac = try s.octets(2) }
        let signature = try s.octets(3, length: 64)
        var resumptionID: [UInt8]?
        if withResumption { resumptionID = try s.octets(4, length: 16) }
        return (noc, icac, signature, resumptionID)
    }
}

/// A structure with one octet-string member (Sigma3).
enum TLVStructure {
    static func encode(octets: [UInt8], tag: UInt8) throws(MatterSecurityError) -> [UInt8] {
        try tlv { () throws(TLVError) in try TLVElement.structure([.init(.context(tag), .bytes(octets))]).encoded() }
    }

    static func octets(_ bytes: [UInt8], tag: UInt8, what: String) throws(MatterSecurityError) -> [UInt8] {
        try TLVElement.decodeStructure(bytes, what).octets(tag)
    }
}
