import SwiftASN1

/// A distinguished name as Matter certificates carry it (Core Specification 6.5.6): an ordered
/// list of attributes, each its own RDN in X.509.
public struct MatterDistinguishedName: Hashable, Sendable {
    /// One attribute. Tags 1…16 are the X.520 string attributes (a PrintableString in X.509 when
    /// `printable`), 17…22 Matter's own, numbers printed as upper-case hex in X.509.
    public enum Attribute: Hashable, Sendable {
        case string(tag: UInt8, value: String, printable: Bool)
        case matterNodeID(UInt64)
        case matterFirmwareSigningID(UInt64)
        case matterICACID(UInt64)
        case matterRCACID(UInt64)
        case matterFabricID(UInt64)
        case matterCASEAuthenticatedTag(UInt32)

        /// A common name, UTF8String in X.509.
        public static func commonName(_ value: String) -> Attribute { .string(tag: 1, value: value, printable: false) }
    }

    public var attributes: [Attribute]

    public init(_ attributes: [Attribute]) { self.attributes = attributes }

    /// The node ID (NOC subjects).
    public var nodeID: UInt64? {
        for case .matterNodeID(let v) in attributes { return v }
        return nil
    }
    /// The fabric ID (RCAC, ICAC, NOC subjects, when present).
    public var fabricID: UInt64? {
        for case .matterFabricID(let v) in attributes { return v }
        return nil
    }
    public var rcacID: UInt64? {
        for case .matterRCACID(let v) in attributes { return v }
        return nil
    }
    public var icacID: UInt64? {
        for case .matterICACID(let v) in attributes { return v }
        return nil
    }
    /// The CASE Authenticated Tags of a NOC subject.
    public var caseAuthenticatedTags: [UInt32] {
        attributes.compactMap { if case .matterCASEAuthenticatedTag(let v) = $0 { v } else { nil } }
    }

    // X.520 attribute OIDs by TLV tag 1…16.
    static let stringOIDs: [UInt8: ASN1ObjectIdentifier] = [
        1: [2, 5, 4, 3], 2: [2, 5, 4, 4], 3: [2, 5, 4, 5], 4: [2, 5, 4, 6], 5: [2, 5, 4, 7], 6: [2, 5, 4, 8],
        7: [2, 5, 4, 10], 8: [2, 5, 4, 11], 9: [2, 5, 4, 12], 10: [2, 5, 4, 41], 11: [2, 5, 4, 42], 12: [2, 5, 4, 43],
        13: [2, 5, 4, 44], 14: [2, 5, 4, 46], 15: [2, 5, 4, 65], 16: [0, 9, 2342, 19_200_300, 100, 1, 25],
    ]
    // Matter's OIDs 1.3.6.1.4.1.37244.1.{1…6} by TLV tag 17…22.
    static func matterOID(_ tag: UInt8) -> ASN1ObjectIdentifier { [1, 3, 6, 1, 4, 1, 37244, 1, UInt(tag - 16)] }
}

extension MatterDistinguishedName.Attribute {
    /// The TLV context tag (printable strings add 0x80).
    var tlvTag: UInt8 {
        switch self {
        case .string(let tag, _, let printable): printable ? tag | 0x80 : tag
        case .matterNodeID: 17
        case .matterFirmwareSigningID: 18
        case .matterICACID: 19
        case .matterRCACID: 20
        case .matterFabricID: 21
        case .matterCASEAuthenticatedTag: 22
        }
    }

    init(tlvTag: UInt8, unsigned: UInt64?, string: String?) throws(MatterSecurityError) {
        switch tlvTag {
        case 17...21:
            guard let v = unsigned else { throw .certificate("DN attribute \(tlvTag) is not an unsigned integer") }
            switch tlvTag {
            case 17: self = .matterNodeID(v)
            case 18: self = .matterFirmwareSigningID(v)
            case 19: self = .matterICACID(v)
            case 20: self = .matterRCACID(v)
            default: self = .matterFabricID(v)
            }
        case 22:
            guard let v = unsigned, v <= UInt32.max else { throw .certificate("DN CASE Authenticated Tag is not a 32-bit integer") }
            self = .matterCASEAuthenticatedTag(UInt32(v))
        case 1...16, 0x81...0x90:
            guard let s = string else { throw .certificate("DN attribute \(tlvTag) is not a string") }
            self = .string(tag: tlvTag & 0x7F, value: s, printable: tlvTag & 0x80 != 0)
        default:
            throw .certificate("DN attribute tag \(tlvTag) is unknown")
        }
    }

    /// The X.509 form: OID and encoded value.
    func x509() throws(MatterSecurityError) -> (oid: ASN1ObjectIdentifier, value: ASN1Any) {
        func string(_ s: String, _ identifier: ASN1Identifier) throws(MatterSecurityError) -> ASN1Any {
            do {
                var serializer = DER.Serializer()
                serializer.appendPrimitiveNode(identifier: identifier) { $0.append(contentsOf: Array(s.utf8)) }
                return try ASN1Any(derEncoded: serializer.serializedBytes)
            } catch {
                throw .certificate("DN value cannot be encoded: \(error)")
            }
        }
        switch self {
        case .string(let tag, let value, let printable):
            guard let oid = MatterDistinguishedName.stringOIDs[tag] else { throw .certificate("DN tag \(tag) is unknown") }
            let identifier: ASN1Identifier = tag == 16 ? .ia5String : (printable ? .printableString : .utf8String)
            return (oid, try string(value, identifier))
        case .matterCASEAuthenticatedTag(let v):
            return (MatterDistinguishedName.matterOID(tlvTag), try string(Self.hex(UInt64(v), digits: 8), .utf8String))
        case .matterNodeID(let v), .matterFirmwareSigningID(let v), .matterICACID(let v), .matterRCACID(let v),
            .matterFabricID(let v):
            return (MatterDistinguishedName.matterOID(tlvTag), try string(Self.hex(v, digits: 16), .utf8String))
        }
    }

    static func hex(_ v: UInt64, digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }
}
