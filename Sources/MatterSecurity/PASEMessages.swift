import MatterTLV

/// PBKDFParamRequest (Core Specification 4.14.1.2): the commissioner's first PASE message.
public struct PBKDFParamRequest: Hashable, Sendable {
    public var initiatorRandom: [UInt8]
    public var initiatorSessionID: UInt16
    /// 0: the default commissioning passcode.
    public var passcodeID: UInt16
    /// True when the initiator already knows the salt and iteration count.
    public var hasPBKDFParameters: Bool
    public var sessionParameters: SessionParameters?

    public init(
        initiatorRandom: [UInt8], initiatorSessionID: UInt16, passcodeID: UInt16 = 0, hasPBKDFParameters: Bool = false,
        sessionParameters: SessionParameters? = nil
    ) {
        self.initiatorRandom = initiatorRandom
        self.initiatorSessionID = initiatorSessionID
        self.passcodeID = passcodeID
        self.hasPBKDFParameters = hasPBKDFParameters
        self.sessionParameters = sessionParameters
    }

    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        var members: [TLVElement] = [
            .init(.context(1), .bytes(initiatorRandom)),
            .init(.context(2), .unsigned(UInt64(initiatorSessionID))),
            .init(.context(3), .unsigned(UInt64(passcodeID))),
            .init(.context(4), .bool(hasPBKDFParameters)),
        ]
        if let sessionParameters { members.append(sessionParameters.element(.context(5))) }
        return try tlv { () throws(TLVError) in try TLVElement.structure(members).encoded() }
    }

    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        let s = try TLVElement.decodeStructure(bytes, "PBKDFParamRequest")
        initiatorRandom = try s.octets(1, length: 32)
        (initiatorSessionID, passcodeID, hasPBKDFParameters) = try tlv { () throws(TLVError) in
            (try s.member(.context(2)).uint(as: UInt16.self), try s.member(.context(3)).uint(as: UInt16.self),
             try s.member(.context(4)).bool())
        }
        sessionParameters = try s[context: 5].map { e throws(MatterSecurityError) in try SessionParameters(e) }
    }
}

/// PBKDFParamResponse (4.14.1.2): the device's answer with its random, session ID and, unless
/// the initiator has them, the salt and iteration count.
public struct PBKDFParamResponse: Hashable, Sendable {
    public var initiatorRandom: [UInt8]
    public var responderRandom: [UInt8]
    public var responderSessionID: UInt16
    public var iterations: UInt32?
    public var salt: [UInt8]?
    public var sessionParameters: SessionParameters?

    public init(
        initiatorRandom: [UInt8], responderRandom: [UInt8], responderSessionID: UInt16, iterations: UInt32?, salt: [UInt8]?,
        sessionParameters: SessionParameters? = nil
    ) {
        self.initiatorRandom = initiatorRandom
        self.responderRandom = responderRandom
        self.responderSessionID = responderSessionID
        self.iterations = iterations
        self.salt = salt
        self.sessionParameters = sessionParameters
    }

    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        var members: [TLVElement] = [
            .init(.context(1), .bytes(initiatorRandom)),
            .init(.context(2), .bytes(responderRandom)),
            .init(.context(3), .unsigned(UInt64(responderSessionID))),
        ]
        if let iterations, let salt {
            members.append(.structure(.context(4), [.init(.context(1), .unsigned(UInt64(iterations))), .init(.context(2), .bytes(salt))]))
        }
        if let sessionParameters { members.append(sessionParameters.element(.context(5))) }
        return try tlv { () throws(TLVError) in try TLVElement.structure(members).encoded() }
    }

    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        let s = try TLVElement.decodeStructure(bytes, "PBKDFParamResponse")
        initiatorRandom = try s.octets(1, length: 32)
        responderRandom = try s.octets(2, length: 32)
        responderSessionID = try tlv { () throws(TLVError) in try s.member(.context(3)).uint(as: UInt16.self) }
        if let parameters = s[context: 4] {
            iterations = try tlv { () throws(TLVError) in try parameters.member(.context(1)).uint(as: UInt32.self) }
            salt = try parameters.octets(2)
        }
        sessionParameters = try s[context: 5].map { e throws(MatterSecurityError) in try SessionParameters(e) }
    }
}

/// Pake1 (4.14.1.3): the prover's share pA.
public struct Pake1: Hashable, Sendable {
    public var pA: [UInt8]
    public init(pA: [UInt8]) { self.pA = pA }
    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        try tlv { () throws(TLVError) in try TLVElement.structure([.init(.context(1), .bytes(pA))]).encoded() }
    }
    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        pA = try TLVElement.decodeStructure(bytes, "Pake1").octets(1, length: P256Arithmetic.pointLength)
    }
}

/// Pake2: the verifier's share pB and confirmation cB.
public struct Pake2: Hashable, Sendable {
    public var pB: [UInt8]
    public var cB: [UInt8]
    public init(pB: [UInt8], cB: [UInt8]) {
        self.pB = pB
        self.cB = cB
    }
    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        try tlv { () throws(TLVError) in
            try TLVElement.structure([.init(.context(1), .bytes(pB)), .init(.context(2), .bytes(cB))]).encoded()
        }
    }
    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        let s = try TLVElement.decodeStructure(bytes, "Pake2")
        pB = try s.octets(1, length: P256Arithmetic.pointLength)
        cB = try s.octets(2, length: 32)
    }
}

/// Pake3: the prover's confirmation cA.
public struct Pake3: Hashable, Sendable {
    public var cA: [UInt8]
    public init(cA: [UInt8]) { self.cA = cA }
    public func encoded() throws(MatterSecurityError) -> [UInt8] {
        try tlv { () throws(TLVError) in try TLVElement.structure([.init(.context(1), .bytes(cA))]).encoded() }
    }
    public init(decoding bytes: [UInt8]) throws(MatterSecurityError) {
        cA = try TLVElement.decodeStructure(bytes, "Pake3").octets(1, length: 32)
    }
}
