/// Why TLV input was refused or a value could not be encoded or read.
///
/// A struct over a private code so new reasons can be added without breaking callers; compare
/// with the static members (`error.code == .truncated`).
public struct TLVError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a value that can grow.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let raw: UInt8
        public static let truncated = Code(raw: 1)
        public static let reservedElementType = Code(raw: 2)
        public static let unexpectedEndOfContainer = Code(raw: 3)
        public static let unterminatedContainer = Code(raw: 4)
        public static let tooDeep = Code(raw: 5)
        public static let tooLong = Code(raw: 6)
        public static let invalidUTF8 = Code(raw: 7)
        public static let invalidTag = Code(raw: 8)
        public static let duplicateTag = Code(raw: 9)
        public static let trailingBytes = Code(raw: 10)
        public static let typeMismatch = Code(raw: 11)
        public static let missingMember = Code(raw: 12)
        public static let outOfRange = Code(raw: 13)
        public static let unbalancedWriter = Code(raw: 14)
        public static let notCanonical = Code(raw: 15)

        public var description: String {
            switch raw {
            case 1: return "truncated"
            case 2: return "reservedElementType"
            case 3: return "unexpectedEndOfContainer"
            case 4: return "unterminatedContainer"
            case 5: return "tooDeep"
            case 6: return "tooLong"
            case 7: return "invalidUTF8"
            case 8: return "invalidTag"
            case 9: return "duplicateTag"
            case 10: return "trailingBytes"
            case 11: return "typeMismatch"
            case 12: return "missingMember"
            case 13: return "outOfRange"
            case 14: return "unbalancedWriter"
            case 15: return "notCanonical"
            default: return "code\(raw)"
            }
        }
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence a person can act on.
    public let message: String
    /// Byte offset in the input where the problem was found, when decoding.
    public let offset: Int?

    public init(_ code: Code, _ message: String, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    public var description: String {
        if let offset { return "TLV \(code) at byte \(offset): \(message)" }
        return "TLV \(code): \(message)"
    }
}
