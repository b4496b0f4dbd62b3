public import HomeModel

/// What the edges (the API server, bridges) need from the access domain: users, passwords,
/// bearer tokens, app consent requests and grants.
///
/// The core owns this protocol, as it owns ``LayoutStore``; HomeStorage implements it on
/// SQLite (`AccessStore`). Every method is synchronous and thread-safe; failures are
/// ``HomeError``s with a message a person can act on. Secrets are never stored in clear.
///
/// ```swift
/// let access: any AccessControl = database.accessStore()
/// let token = try access.login(username: "alice", password: "…")
/// let session = try access.authenticate(token: token.token)   // → principal user:alice
/// ```
public protocol AccessControl: Sendable {
    // MARK: First start

    /// On the first start, creates the first admin without a password; while that admin has
    /// none, returns a fresh one-time setup code (older codes stop working), else nil.
    func bootstrap() throws(HomeError) -> String?

    /// Uses the one-time setup code: sets the first admin's password and signs them in.
    ///
    /// - Throws: `unauthenticated` for a wrong or used code, `invalidArgument` for a weak password.
    func completeSetup(code: String, password: String) throws(HomeError) -> IssuedToken

    // MARK: Users

    /// Signs a user in. - Throws: `unauthenticated`, the same for an unknown user.
    func login(username: String, password: String) throws(HomeError) -> IssuedToken
    /// Every user, by name.
    func users() throws(HomeError) -> [User]
    /// Adds a user. - Throws: `invalidArgument` (name, role, weak password), `conflict` (name taken).
    @discardableResult
    func addUser(username: String, password: String, role: Principal.Role) throws(HomeError) -> User
    /// Removes a user; returns the IDs of the tokens revoked (their sessions must be ended).
    func removeUser(_ username: String) throws(HomeError) -> [String]
    /// A user changes their own password; every other session of theirs but `tokenID` is
    /// revoked, and their IDs returned.
    func changePassword(username: String, current: String, new: String, keeping tokenID: String?) throws(HomeError) -> [String]
    /// An admin sets a user's password; returns the IDs of that user's revoked tokens.
    func resetPassword(username: String, new: String) throws(HomeError) -> [String]

    // MARK: Tokens

    /// The session a bearer token stands for; nil when unknown. - Throws: `permissionDenied` when revoked.
    func authenticate(token: String) throws(HomeError) -> AuthSession?
    /// Whether a token exists and is not revoked.
    func isLive(tokenID: String) throws(HomeError) -> Bool
    /// Revokes a token; false when it was unknown or already revoked.
    @discardableResult
    func revokeToken(id: String) throws(HomeError) -> Bool

    // MARK: Apps (the consent step, see ``ConsentWorkflow``)

    /// An app asks for access; the secret proves later that the collector is the asker.
    func createAppRequest(appName: String, deviceTypes: [DeviceTypeID]) throws(HomeError) -> (AppRequest, secret: String)
    /// The same, with the (device type, trait) pairs the app wants to automate.
    func createAppRequest(appName: String, deviceTypes: [DeviceTypeID], automationTypes: [AutomationType]) throws(HomeError)
        -> (AppRequest, secret: String)
    /// One request, or `notFound`.
    func appRequest(id: String) throws(HomeError) -> AppRequest
    /// Requests, newest first; only pending ones when asked.
    func appRequests(pendingOnly: Bool) throws(HomeError) -> [AppRequest]
    /// Checks an app's request secret: `notFound` or `permissionDenied`.
    func verifyRequestSecret(id: String, secret: String) throws(HomeError)
    /// An admin approves a pending request with the scope they chose.
    func approve(requestID: String, scope: GrantScope, by admin: String) throws(HomeError) -> AppRequest
    /// An admin denies a pending request.
    func deny(requestID: String, by admin: String) throws(HomeError) -> AppRequest
    /// The app collects its token, once, after approval; nil while pending.
    func claimToken(requestID: String, secret: String, strictOperationValidation: Bool?) throws(HomeError) -> IssuedToken?
    /// App grants (issued tokens), newest first.
    func grants(includeRevoked: Bool) throws(HomeError) -> [AppGrant]
    /// An admin changes a live grant's scope; `notFound` when it is unknown or revoked.
    func updateGrant(id: String, scope: GrantScope) throws(HomeError)

    // MARK: Permission changes (an app with a grant asks for another scope)

    /// The app holding live grant `grantID` asks for `deviceTypes` (empty: all); a pending
    /// change of the same grant is superseded. - Throws: `notFound` for a revoked grant.
    func requestGrantChange(grantID: String, deviceTypes: [DeviceTypeID]) throws(HomeError) -> GrantChange
    /// One change, or `notFound`.
    func grantChange(id: String) throws(HomeError) -> GrantChange
    /// Changes, newest first; only pending ones when asked.
    func grantChanges(pendingOnly: Bool) throws(HomeError) -> [GrantChange]
    /// An admin approves a pending change: its status and the grant's scope change in one
    /// transaction (the app keeps its validation mode). - Throws: `conflict` unless pending,
    /// `notFound` when the grant is gone.
    func approveGrantChange(id: String, scope: GrantScope, by admin: String) throws(HomeError) -> GrantChange
    /// An admin denies a pending change; the grant stays as it is.
    func denyGrantChange(id: String, by admin: String) throws(HomeError) -> GrantChange

    // MARK: Favourites (per user)

    /// The devices a user pinned, in their order (empty when none or an unknown user).
    func favourites(username: String) throws(HomeError) -> [DeviceID]
    /// Replaces a user's favourites (duplicates dropped, order kept). - Throws: `notFound`
    /// for an unknown user, `invalidArgument` past ``maxFavourites``.
    func setFavourites(username: String, _ devices: [DeviceID]) throws(HomeError) -> [DeviceID]

    // MARK: Health

    /// Reads from the store once: throws when it cannot answer (for `/readyz`).
    func checkReadable() throws(HomeError)
}
