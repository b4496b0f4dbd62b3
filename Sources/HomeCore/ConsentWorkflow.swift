public import HomeModel

/// The consent step's transitions as a pure value: where an app request may go from where it is.
///
/// ```
/// pending ──approve──▶ approved ──claim──▶ issued ──revoke──▶ revoked
///    └──────deny─────▶ denied
/// ```
///
/// A store reads a request's status, applies one transition and writes the new status in the
/// same transaction; the rules live here, tested without any storage.
///
/// ```swift
/// var flow = ConsentWorkflow(requestID: "req-1", status: .pending)
/// try flow.approve()                       // .approved
/// if try flow.claim() { /* issue the token */ }   // .issued
/// ```
public struct ConsentWorkflow: Hashable, Sendable {
    public let requestID: String
    public private(set) var status: AppRequest.Status

    public init(requestID: String, status: AppRequest.Status) {
        self.requestID = requestID
        self.status = status
    }

    /// An admin approves. - Throws: `conflict` unless pending.
    public mutating func approve() throws(HomeError) {
        try decide(.approved)
    }

    /// An admin denies. - Throws: `conflict` unless pending.
    public mutating func deny() throws(HomeError) {
        try decide(.denied)
    }

    /// The app collects its token.
    ///
    /// - Returns: true when a token is to be issued now (approved → issued); false while the
    ///   request is still pending (the app waits).
    /// - Throws: `permissionDenied` when denied or revoked; `conflict` when already collected.
    public mutating func claim() throws(HomeError) -> Bool {
        switch status {
        case .pending: return false
        case .denied: throw .permissionDenied("an admin denied this app's request")
        case .revoked: throw .permissionDenied("this app's grant was revoked")
        case .issued: throw .conflict("this request's token was already collected; ask for access again")
        case .approved:
            status = .issued
            return true
        }
    }

    /// The grant's token was revoked: an issued request becomes revoked; any other state stays.
    ///
    /// - Returns: whether the status changed.
    @discardableResult
    public mutating func revoke() -> Bool {
        guard status == .issued else { return false }
        status = .revoked
        return true
    }

    mutating func decide(_ next: AppRequest.Status) throws(HomeError) {
        guard status == .pending else {
            throw .conflict("app request \(requestID) was already decided (\(status.rawValue))")
        }
        status = next
    }
}
