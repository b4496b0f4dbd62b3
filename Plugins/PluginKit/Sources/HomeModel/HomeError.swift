/// The one error type of the home model, the core and the API.
///
/// A struct over a stable ``Code`` (which renders on the wire, e.g. `permissionDenied`) and a
/// message a person can act on. New codes can be added without breaking anyone's `switch`.
public struct HomeError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// A stable error code.
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The caller's principal may not do this.
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// No such device, room, structure, trait, attribute, command or plugin.
        public static let notFound = Code(rawValue: "notFound")
        /// An argument, name, value or configuration is malformed or out of range.
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// The trait, command or attribute exists but this device does not support it.
        public static let unsupportedOperation = Code(rawValue: "unsupportedOperation")
        /// The device is offline: the command cannot reach it.
        public static let deviceOffline = Code(rawValue: "deviceOffline")
        /// The operation did not finish in time.
        public static let timeout = Code(rawValue: "timeout")
        /// The request conflicts with the current state (e.g. a name already taken).
        public static let conflict = Code(rawValue: "conflict")
        /// Authentication is missing or invalid.
        public static let unauthenticated = Code(rawValue: "unauthenticated")
        /// A plugin failed to handle the request.
        public static let driverError = Code(rawValue: "driverError")
        /// Too many attempts; try again later.
        public static let rateLimited = Code(rawValue: "rateLimited")
        /// A bug or an unexpected failure inside Hearth.
        public static let `internal` = Code(rawValue: "internal")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    public static func permissionDenied(_ m: String) -> Self { .init(.permissionDenied, m) }
    public static func notFound(_ m: String) -> Self { .init(.notFound, m) }
    public static func invalidArgument(_ m: String) -> Self { .init(.invalidArgument, m) }
    public static func unsupportedOperation(_ m: String) -> Self { .init(.unsupportedOperation, m) }
    public static func deviceOffline(_ m: String) -> Self { .init(.deviceOffline, m) }
    public static func conflict(_ m: String) -> Self { .init(.conflict, m) }
    public static func driverError(_ m: String) -> Self { .init(.driverError, m) }
    public static func timeout(_ m: String) -> Self { .init(.timeout, m) }
    public static func `internal`(_ m: String) -> Self { .init(.internal, m) }
}
