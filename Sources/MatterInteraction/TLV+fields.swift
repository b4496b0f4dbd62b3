import MatterTLV

// Small helpers for the IM codecs: optional context-tagged members of a decoded container and
// their builders. Every decoder throws `TLVError` (typeMismatch, missingMember, outOfRange).

extension TLVElement {
    func optionalUInt<T: FixedWidthInteger & UnsignedInteger>(_ n: UInt8, as type: T.Type) throws(TLVError) -> T? {
        guard let m = try container()[context: n] else { return nil }
        return try m.uint(as: type)
    }

    func requiredUInt<T: FixedWidthInteger & UnsignedInteger>(_ n: UInt8, as type: T.Type) throws(TLVError) -> T {
        try member(.context(n)).uint(as: type)
    }

    func optionalBool(_ n: UInt8) throws(TLVError) -> Bool? {
        guard let m = try container()[context: n] else { return nil }
        return try m.bool()
    }

    /// The members of an array member `n` (nil when absent).
    func optionalArray(_ n: UInt8) throws(TLVError) -> [TLVElement]? {
        guard let m = try container()[context: n] else { return nil }
        guard case .array(let items) = m.value else {
            throw TLVError(.typeMismatch, "expected an array at tag \(n), found \(m.value.kindName)")
        }
        return items
    }

    /// Self, after checking this is a structure or list (paths are lists, IBs structures).
    func container() throws(TLVError) -> TLVElement {
        guard members != nil else { throw TLVError(.typeMismatch, "expected a container, found \(value.kindName)") }
        return self
    }

    /// Self, after checking it is a structure.
    func structure() throws(TLVError) -> TLVElement {
        guard case .structure = value else { throw TLVError(.typeMismatch, "expected a structure, found \(value.kindName)") }
        return self
    }

    /// Self, after checking it is a list.
    func list() throws(TLVError) -> TLVElement {
        guard case .list = value else { throw TLVError(.typeMismatch, "expected a list, found \(value.kindName)") }
        return self
    }
}

/// Collects the members of a container being encoded, skipping absent optionals.
struct Members {
    var items: [TLVElement] = []

    mutating func uint<T: FixedWidthInteger & UnsignedInteger>(_ n: UInt8, _ v: T?) {
        if let v { items.append(TLVElement(.context(n), .unsigned(UInt64(v)))) }
    }

    mutating func bool(_ n: UInt8, _ v: Bool?) {
        if let v { items.append(TLVElement(.context(n), .bool(v))) }
    }

    mutating func element(_ n: UInt8, _ e: TLVElement?) {
        if var e {
            e.tag = .context(n)
            items.append(e)
        }
    }

    mutating func array(_ n: UInt8, _ elements: [TLVElement]?) {
        if let elements { items.append(.array(.context(n), elements.map { TLVElement(.anonymous, $0.value) })) }
    }

    /// Appends the `InteractionModelRevision` member (last: tag 0xFF sorts after every other).
    mutating func revision() {
        items.append(TLVElement(.context(revisionTag), .unsigned(UInt64(interactionModelRevision))))
    }
}
