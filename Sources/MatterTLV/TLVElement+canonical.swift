// Canonical form (Matter Core Specification, Appendix A): integers and string lengths in their
// smallest width (the writer always does this), and structure members in canonical tag order
// (A.2.4: context-specific tags ascending, then common-profile, implicit-profile and
// fully-qualified tags).

extension TLVElement {
    /// Whether every structure (at any depth) lists its members in canonical tag order.
    public var hasCanonicalOrder: Bool {
        switch value {
        case .structure(let m):
            for i in m.indices.dropFirst() where !m[i - 1].tag.canonicallyPrecedes(m[i].tag) {
                return false
            }
            return m.allSatisfy(\.hasCanonicalOrder)
        case .array(let m), .list(let m):
            return m.allSatisfy(\.hasCanonicalOrder)
        default:
            return true
        }
    }

    /// A copy whose structures (at any depth) are sorted into canonical tag order. Lists and
    /// arrays keep their order, which is meaningful.
    public func canonicallyOrdered() -> TLVElement {
        switch value {
        case .structure(let m):
            let sorted = m.map { $0.canonicallyOrdered() }.sorted { $0.tag.canonicallyPrecedes($1.tag) }
            return TLVElement(tag, .structure(sorted))
        case .array(let m):
            return TLVElement(tag, .array(m.map { $0.canonicallyOrdered() }))
        case .list(let m):
            return TLVElement(tag, .list(m.map { $0.canonicallyOrdered() }))
        default:
            return self
        }
    }

    /// Decodes `bytes` and refuses them with `notCanonical` unless they are exactly the
    /// canonical encoding of what they hold (smallest widths, canonical structure order) —
    /// for input that is signed or hashed, such as certificates.
    public init(decodingCanonical bytes: [UInt8], limits: TLVLimits = .default) throws(TLVError) {
        let element = try TLVElement(decoding: bytes, limits: limits)
        guard element.hasCanonicalOrder else {
            throw TLVError(.notCanonical, "structure members are not in canonical tag order")
        }
        guard try element.encoded() == bytes else {
            throw TLVError(.notCanonical, "an integer, length or tag is wider than needed")
        }
        self = element
    }
}
