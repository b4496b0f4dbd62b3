public import HomeModel

/// Every error code on the wire: a closed set, decoded strictly (an unknown code is a decoding
/// error naming the known ones), so the server, the Swift client and the CLI `switch` over it
/// exhaustively. The web page's `Web/core.js` compares the same strings.
///
/// The codes are ``HomeError/Code``'s; ``WireError/init(_:)`` is the one place a `HomeError`
/// becomes a wire error.
public enum WireErrorCode: String, WireEnum {
    /// The caller's principal may not do this (HTTP 403).
    case permissionDenied
    /// No such device, room, structure, trait, attribute, command, plugin or route (404).
    case notFound
    /// A malformed or out-of-range argument, name, value or body (400).
    case invalidArgument
    /// The device exists but does not support the trait, command or attribute (422).
    case unsupportedOperation
    /// The device is offline; the command cannot reach it (503).
    case deviceOffline
    /// The operation did not finish in time (504).
    case timeout
    /// The request conflicts with the current state, e.g. a name already taken (409).
    case conflict
    /// No, or no valid, credentials (401).
    case unauthenticated
    /// A plugin failed to handle the request (502).
    case driverError
    /// Too many attempts; try again later (429).
    case rateLimited
    /// A failure inside Hearth (500).
    case `internal`
    /// Never sent by the server: a client could not reach it (the connection or the WebSocket
    /// failed), so a client's errors stay in the same set.
    case unreachable

    public init(from decoder: any Decoder) throws { self = try Self.decodeCase(from: decoder) }

    /// The wire code of a ``HomeError/Code``; a code the wire does not know is `internal`.
    public init(_ code: HomeError.Code) { self = Self(rawValue: code.rawValue) ?? .internal }

    /// The same code in the home model.
    public var homeErrorCode: HomeError.Code { HomeError.Code(rawValue: rawValue) }
}

/// An error on the wire: `{"code": "permissionDenied", "message": "…"}` (the HTTP error body's
/// `error`, a WebSocket `error` or `closing` message's `error`).
public struct WireError: Error, Codable, Sendable, Hashable, CustomStringConvertible {
    public let code: WireErrorCode
    /// What happened, in words a person can act on.
    public let message: String

    public init(code: WireErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    /// The domain → wire mapping of errors. A `HomeError` whose code the wire does not know
    /// goes out as `internal`, its own code kept in the message.
    public init(_ error: HomeError) {
        let code = WireErrorCode(error.code)
        self.init(code: code, message: code.rawValue == error.code.rawValue ? error.message : "\(error.code): \(error.message)")
    }

    /// The error as the Home API throws it (the Swift client's callers catch `HomeError`).
    public var homeError: HomeError { HomeError(code.homeErrorCode, message) }

    public var description: String { "\(code.rawValue): \(message)" }
}
