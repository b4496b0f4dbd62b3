/// Why a message was refused or could not be sent.
///
/// A struct over a private code so reasons can be added without breaking callers.
public struct MessagingError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let raw: UInt8
        public static let malformed = Code(raw: 1)
        public static let unsupportedVersion = Code(raw: 2)
        public static let authenticationFailed = Code(raw: 3)
        public static let duplicate = Code(raw: 4)
        public static let unknownSession = Code(raw: 5)
        public static let counterExhausted = Code(raw: 6)
        public static let exchangeClosed = Code(raw: 7)
        public static let retransmitLimit = Code(raw: 8)
        public static let busy = Code(raw: 9)
        public static let transport = Code(raw: 10)
        public static let invalidKey = Code(raw: 11)

        public var description: String {
            ["", "malformed", "unsupportedVersion", "authenticationFailed", "duplicate", "unknownSession",
             "counterExhausted", "exchangeClosed", "retransmitLimit", "busy", "transport", "invalidKey"][Int(raw)]
        }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "Matter message \(code): \(message)" }
}
