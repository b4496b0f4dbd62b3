/// The tag of a Matter TLV element (Matter Core Specification, Appendix A.2 "Tags" and A.7
/// "Tag Control Field").
///
/// The encoded form is chosen from the value: a profile tag that fits in 16 bits uses the
/// 2-byte form, otherwise the 4-byte form; a fully-qualified tag uses the 6-byte form when its
/// tag number fits in 16 bits, otherwise the 8-byte form.
public enum TLVTag: Hashable, Sendable {
    /// No tag (tag control 0). Required for array members.
    case anonymous
    /// A context-specific tag, 0…255 (tag control 1).
    case context(UInt8)
    /// A tag of the Matter common profile (tag control 2 and 3).
    case commonProfile(UInt32)
    /// A tag of the implicit profile of the surrounding protocol (tag control 4 and 5).
    case implicitProfile(UInt32)
    /// A fully-qualified tag: vendor ID, profile number and tag number (tag control 6 and 7).
    case fullyQualified(vendorID: UInt16, profile: UInt16, tag: UInt32)

    /// Whether this is `.anonymous`.
    public var isAnonymous: Bool {
        if case .anonymous = self { return true }
        return false
    }

    /// The tag control bits (the upper 3 bits of the control byte) this tag is written with.
    var control: UInt8 {
        switch self {
        case .anonymous: return 0
        case .context: return 1
        case .commonProfile(let t): return t <= 0xFFFF ? 2 : 3
        case .implicitProfile(let t): return t <= 0xFFFF ? 4 : 5
        case .fullyQualified(_, _, let t): return t <= 0xFFFF ? 6 : 7
        }
    }

    /// Number of bytes that follow the control byte for each tag control value.
    static let sizes: [Int] = [0, 1, 2, 4, 2, 4, 6, 8]

    /// The order of tags inside a canonically encoded structure (Appendix A.2.4):
    /// context-specific tags by number, then common-profile, implicit-profile and fully
    /// qualified tags (by vendor ID, profile number, then tag number). Anonymous tags sort first.
    static func canonicalKey(_ tag: TLVTag) -> (UInt8, UInt64) {
        switch tag {
        case .anonymous: return (0, 0)
        case .context(let t): return (1, UInt64(t))
        case .commonProfile(let t): return (2, UInt64(t))
        case .implicitProfile(let t): return (3, UInt64(t))
        case .fullyQualified(let v, let p, let t): return (4, UInt64(v) << 48 | UInt64(p) << 32 | UInt64(t))
        }
    }

    /// Whether `self` sorts before `other` in canonical order.
    public func canonicallyPrecedes(_ other: TLVTag) -> Bool {
        let a = TLVTag.canonicalKey(self), b = TLVTag.canonicalKey(other)
        return a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
    }
}

extension TLVTag: CustomStringConvertible {
    public var description: String {
        switch self {
        case .anonymous: return "anonymous"
        case .context(let t): return "\(t)"
        case .commonProfile(let t): return "Matter::\(t)"
        case .implicitProfile(let t): return ":\(t)"
        case .fullyQualified(let v, let p, let t): return "\(v)::\(p):\(t)"
        }
    }
}
