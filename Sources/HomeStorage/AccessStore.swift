public import Foundation
public import GRDB
public import HomeCore
public import HomeModel
import Synchronization

/// Users, password hashes, bearer tokens, app consent requests and grants, in SQLite.
///
/// Secrets are never stored: passwords as PBKDF2-HMAC-SHA256 hashes, tokens, setup codes and
/// app request secrets as their SHA-256. Every method is synchronous and thread-safe (GRDB
/// serialises writes); failures are ``HomeError``s with a message a person can act on.
///
/// It implements HomeCore's ``AccessControl``; the consent step's rules are HomeCore's
/// ``ConsentWorkflow``.
///
/// ```swift
/// var migrator = DatabaseMigrator()
/// AccessStore.registerMigrations(in: &migrator)
/// try migrator.migrate(pool)
/// let access = AccessStore(writer: pool)
/// if let code = try access.bootstrap() { print("setup code: \(code)") }
/// ```
public final class AccessStore: AccessControl {
    let writer: any DatabaseWriter
    /// PBKDF2 rounds for new password hashes (stored with each hash, so it can change).
    let passwordRounds: Int
    let now: @Sendable () -> Date
    /// A hash of no one's password with ``passwordRounds``: what a login for an unknown user (or
    /// one without a password) is checked against, so it takes as long as a wrong password.
    let decoyHash = Mutex<String?>(nil)

    /// - Parameters:
    ///   - writer: a GRDB pool or queue whose migrator ran ``registerMigrations(in:)``.
    ///   - passwordRounds: PBKDF2 rounds; the default follows OWASP's 2023 advice for SHA-256.
    public init(writer: any DatabaseWriter, passwordRounds: Int = 600_000, now: @escaping @Sendable () -> Date = { Date() }) {
        self.writer = writer
        self.passwordRounds = passwordRounds
        self.now = now
    }

    /// At most this many app requests wait at once (anyone may ask, so asking is bounded).
    public static let maxPendingAppRequests = 100

    /// The name of the admin the first start creates.
    public static let firstAdminName = "admin"

    /// Adds the access tables (identifiers prefixed `access-`).
    public static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("access-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE access_users (
                        username TEXT PRIMARY KEY NOT NULL,
                        role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
                        password_hash TEXT,
                        created_at DOUBLE NOT NULL
                    );
                    CREATE TABLE access_tokens (
                        id TEXT PRIMARY KEY NOT NULL,
                        hash TEXT NOT NULL UNIQUE,
                        kind TEXT NOT NULL CHECK (kind IN ('user', 'app')),
                        subject TEXT NOT NULL,
                        role TEXT NOT NULL,
                        scope TEXT,
                        request_id TEXT,
                        created_at DOUBLE NOT NULL,
                        revoked_at DOUBLE
                    );
                    CREATE TABLE access_app_requests (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_name TEXT NOT NULL,
                        requested_types TEXT NOT NULL,
                        secret_hash TEXT NOT NULL,
                        status TEXT NOT NULL,
                        scope TEXT,
                        decided_by TEXT,
                        token_id TEXT,
                        created_at DOUBLE NOT NULL
                    );
                    CREATE TABLE access_setup_codes (
                        hash TEXT PRIMARY KEY NOT NULL,
                        username TEXT NOT NULL REFERENCES access_users(username) ON DELETE CASCADE,
                        created_at DOUBLE NOT NULL,
                        used_at DOUBLE
                    );
                    """)
        }
        // An app's request to change its live grant, linked to that grant's token.
        migrator.registerMigration("access-v2-grant-changes") { db in
            try db.execute(
                sql: """
                    CREATE TABLE access_grant_changes (
                        id TEXT PRIMARY KEY NOT NULL,
                        grant_id TEXT NOT NULL REFERENCES access_tokens(id) ON DELETE CASCADE,
                        requested_types TEXT NOT NULL,
                        status TEXT NOT NULL,
                        scope TEXT,
                        decided_by TEXT,
                        created_at DOUBLE NOT NULL,
                        decided_at DOUBLE
                    );
                    CREATE INDEX access_grant_changes_by_grant ON access_grant_changes(grant_id, status);
                    """)
        }
        // Each user's favourite devices, in their order (they leave with the user).
        migrator.registerMigration("access-v3-favourites") { db in
            try db.execute(
                sql: """
                    CREATE TABLE access_favourites (
                        username TEXT NOT NULL REFERENCES access_users(username) ON DELETE CASCADE,
                        device_id TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        PRIMARY KEY (username, device_id)
                    );
                    """)
        }
    }

    // MARK: - First start

    /// On the first start, creates the admin `admin` without a password; while that admin
    /// has no password, returns a fresh one-time setup code (older codes stop working).
    ///
    /// - Returns: the setup code to print, or nil when setup is done.
    public func bootstrap() throws(HomeError) -> String? {
        try write { db -> String? in
            let t = self.now().timeIntervalSince1970
            if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_users") == 0 {
                try db.execute(
                    sql: "INSERT INTO access_users (username, role, password_hash, created_at) VALUES (?, 'admin', NULL, ?)",
                    arguments: [Self.firstAdminName, t])
            }
            guard
                let admin = try String.fetchOne(
                    db, sql: "SELECT username FROM access_users WHERE role = 'admin' AND password_hash IS NULL ORDER BY created_at LIMIT 1")
            else { return nil }
            let code = AccessSecrets.newSetupCode()
            try db.execute(sql: "DELETE FROM access_setup_codes WHERE used_at IS NULL")
            try db.execute(
                sql: "INSERT INTO access_setup_codes (hash, username, created_at) VALUES (?, ?, ?)",
                arguments: [AccessSecrets.sha256(AccessSecrets.normaliseSetupCode(code)), admin, t])
            return code
        }
    }

    /// Uses the one-time setup code: sets the first admin's password and signs them in.
    ///
    /// - Throws: `unauthenticated` for a wrong or used code, `invalidArgument` for a weak password.
    public func completeSetup(code: String, password: String) throws(HomeError) -> IssuedToken {
        try Self.checkPassword(password)
        let hash = try hashPassword(password)
        return try write { db throws -> IssuedToken in
            let key = AccessSecrets.sha256(AccessSecrets.normaliseSetupCode(code))
            guard
                let username = try String.fetchOne(
                    db, sql: "SELECT username FROM access_setup_codes WHERE hash = ? AND used_at IS NULL", arguments: [key])
            else { throw HomeError(.unauthenticated, "that setup code is wrong or was already used; restart hearthd for a new one") }
            let t = self.now().timeIntervalSince1970
            try db.execute(sql: "UPDATE access_setup_codes SET used_at = ? WHERE hash = ?", arguments: [t, key])
            try db.execute(sql: "UPDATE access_users SET password_hash = ? WHERE username = ?", arguments: [hash, username])
            let role = try String.fetchOne(db, sql: "SELECT role FROM access_users WHERE username = ?", arguments: [username]) ?? "admin"
            return try self.issue(db, kind: "user", subject: username, role: Principal.Role(rawValue: role) ?? .admin, scope: nil, requestID: nil)
        }
    }

    // MARK: - Users

    /// Signs a user in.
    ///
    /// - Throws: `unauthenticated` ("wrong username or password") — the same for an unknown user.
    public func login(username: String, password: String) throws(HomeError) -> IssuedToken {
        let row = try read { db in
            try Row.fetchOne(db, sql: "SELECT role, password_hash FROM access_users WHERE username = ?", arguments: [username])
        }
        // An unknown user costs the same PBKDF2 as a known one: the answer's timing must not
        // tell whether the name exists.
        let stored = row.flatMap { $0["password_hash"] as String? }
        let against: String
        if let stored { against = stored } else { against = try decoy() }
        let matches = AccessSecrets.verifyPassword(password, against: against)
        guard let row, stored != nil, matches, let role = Principal.Role(rawValue: row["role"]) else {
            throw HomeError(.unauthenticated, "wrong username or password")
        }
        return try write { db in try self.issue(db, kind: "user", subject: username, role: role, scope: nil, requestID: nil) }
    }

    /// Every user, by name.
    public func users() throws(HomeError) -> [User] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT username, role, password_hash, created_at FROM access_users ORDER BY username").map {
                User(
                    username: $0["username"], role: Principal.Role(rawValue: $0["role"]) ?? .member,
                    createdAt: Date(timeIntervalSince1970: $0["created_at"]), hasPassword: ($0["password_hash"] as String?) != nil)
            }
        }
    }

    /// Adds a user.
    ///
    /// - Throws: `invalidArgument` for a bad name, role or weak password; `conflict` when the name is taken.
    @discardableResult
    public func addUser(username: String, password: String, role: Principal.Role) throws(HomeError) -> User {
        try Self.checkUsername(username)
        guard role != .app else { throw .invalidArgument("a user's role is admin or member; apps get grants instead") }
        try Self.checkPassword(password)
        let hash = try hashPassword(password)
        let t = now()
        try write { db in
            if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_users WHERE username = ?", arguments: [username]) != 0 {
                throw HomeError.conflict("a user named '\(username)' already exists")
            }
            try db.execute(
                sql: "INSERT INTO access_users (username, role, password_hash, created_at) VALUES (?, ?, ?, ?)",
                arguments: [username, role.rawValue, hash, t.timeIntervalSince1970])
        }
        return User(username: username, role: role, createdAt: t, hasPassword: true)
    }

    /// Removes a user and revokes their tokens.
    ///
    /// - Returns: the IDs of the tokens revoked (their sessions must be ended).
    /// - Throws: `notFound`; `conflict` when it is the last admin.
    public func removeUser(_ username: String) throws(HomeError) -> [String] {
        try write { db in
            guard let role = try String.fetchOne(db, sql: "SELECT role FROM access_users WHERE username = ?", arguments: [username]) else {
                throw HomeError.notFound("no user named '\(username)'")
            }
            if role == "admin", try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_users WHERE role = 'admin'") == 1 {
                throw HomeError.conflict("'\(username)' is the last admin; add another admin first")
            }
            let tokens = try self.revokeUserTokens(db, username: username, except: nil)
            try db.execute(sql: "DELETE FROM access_users WHERE username = ?", arguments: [username])
            return tokens
        }
    }

    /// A signed-in user changes their own password.
    ///
    /// Every other session of theirs is revoked (a stolen token stops working with the old
    /// password); the one making the change, `tokenID`, stays signed in.
    ///
    /// - Returns: the IDs of the tokens revoked (their sessions must be ended).
    /// - Throws: `unauthenticated` ("wrong current password") for a wrong current password —
    ///   the same for an unknown user; `invalidArgument` for a weak or unchanged new password;
    ///   `conflict` when the password changed meanwhile.
    public func changePassword(username: String, current: String, new: String, keeping tokenID: String?) throws(HomeError) -> [String] {
        let stored = try read { db in
            try String.fetchOne(db, sql: "SELECT password_hash FROM access_users WHERE username = ?", arguments: [username])
        }
        guard let stored, AccessSecrets.verifyPassword(current, against: stored) else {
            throw HomeError(.unauthenticated, "wrong current password")
        }
        try Self.checkPassword(new)
        guard new != current else { throw .invalidArgument("the new password is the same as the current one") }
        let hash = try hashPassword(new)
        return try write { db in
            // Only over the hash just verified: a change in between must not be overwritten.
            try db.execute(
                sql: "UPDATE access_users SET password_hash = ? WHERE username = ? AND password_hash = ?", arguments: [hash, username, stored])
            guard db.changesCount == 1 else {
                throw HomeError.conflict("the password of '\(username)' changed meanwhile; sign in again and retry")
            }
            return try self.revokeUserTokens(db, username: username, except: tokenID)
        }
    }

    /// An admin sets a user's password; all that user's tokens are revoked.
    ///
    /// - Returns: the IDs of the tokens revoked (their sessions must be ended).
    /// - Throws: `notFound` for an unknown user; `invalidArgument` for a weak password.
    public func resetPassword(username: String, new: String) throws(HomeError) -> [String] {
        try Self.checkPassword(new)
        let hash = try hashPassword(new)
        return try write { db in
            try db.execute(sql: "UPDATE access_users SET password_hash = ? WHERE username = ?", arguments: [hash, username])
            guard db.changesCount == 1 else { throw HomeError.notFound("no user named '\(username)'") }
            // A setup code still waiting for this user would set the password over this one.
            try db.execute(sql: "DELETE FROM access_setup_codes WHERE username = ? AND used_at IS NULL", arguments: [username])
            return try self.revokeUserTokens(db, username: username, except: nil)
        }
    }

    /// Revokes a user's live tokens but `kept`; returns the IDs revoked.
    func revokeUserTokens(_ db: Database, username: String, except kept: String?) throws -> [String] {
        let tokens = try String.fetchAll(
            db, sql: "SELECT id FROM access_tokens WHERE kind = 'user' AND subject = ? AND revoked_at IS NULL", arguments: [username]
        ).filter { $0 != kept }
        let t = now().timeIntervalSince1970
        for id in tokens {
            try db.execute(sql: "UPDATE access_tokens SET revoked_at = ? WHERE id = ?", arguments: [t, id])
        }
        return tokens
    }

    // MARK: - Tokens

    /// The session a bearer token stands for, or nil when it is unknown.
    ///
    /// - Throws: `permissionDenied` when the token was revoked.
    public func authenticate(token: String) throws(HomeError) -> AuthSession? {
        let hash = AccessSecrets.sha256(token)
        return try read { db -> AuthSession? in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT id, kind, subject, role, scope, revoked_at FROM access_tokens WHERE hash = ?", arguments: [hash])
            else { return nil }
            if (row["revoked_at"] as Double?) != nil {
                throw HomeError.permissionDenied("this token was revoked; sign in or ask for access again")
            }
            let id: String = row["id"]
            let subject: String = row["subject"]
            if row["kind"] == "user" {
                // The user's current role counts, not the one they had at sign-in.
                guard let role = try String.fetchOne(db, sql: "SELECT role FROM access_users WHERE username = ?", arguments: [subject]),
                    let r = Principal.Role(rawValue: role)
                else { return nil }
                return AuthSession(tokenID: id, principal: Principal(id: "user:\(subject)", role: r, sessionID: id), subject: subject)
            }
            let scope = try Self.decodeScope(row["scope"])
            return AuthSession(
                tokenID: id, principal: Principal(id: "app:\(subject)", role: .app, scope: scope, sessionID: id), subject: subject)
        }
    }

    /// Whether a token exists and is not revoked.
    public func isLive(tokenID: String) throws(HomeError) -> Bool {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_tokens WHERE id = ? AND revoked_at IS NULL", arguments: [tokenID]) == 1
        }
    }

    /// An admin changes a live app grant's scope (the app keeps its validation mode).
    public func updateGrant(id: String, scope: GrantScope) throws(HomeError) {
        try write { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT scope FROM access_tokens WHERE id = ? AND kind = 'app' AND revoked_at IS NULL", arguments: [id])
            else { throw HomeError.notFound("no live grant \(id)") }
            var scope = scope
            scope.strictOperationValidation = try Self.decodeScope(row["scope"])?.strictOperationValidation
            try db.execute(sql: "UPDATE access_tokens SET scope = ? WHERE id = ?", arguments: [try Self.encodeJSON(scope), id])
        }
    }

    /// Revokes a token (sign-out, or an admin revoking a grant).
    ///
    /// - Returns: false when it was unknown or already revoked.
    @discardableResult
    public func revokeToken(id: String) throws(HomeError) -> Bool {
        try write { db in
            try db.execute(
                sql: "UPDATE access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                arguments: [self.now().timeIntervalSince1970, id])
            let changed = db.changesCount > 0
            if changed {
                try db.execute(
                    sql: "UPDATE access_grant_changes SET status = 'cancelled', decided_at = ? WHERE grant_id = ? AND status = 'pending'",
                    arguments: [self.now().timeIntervalSince1970, id])
            }
            if changed,
                let row = try Row.fetchOne(db, sql: "SELECT id, status FROM access_app_requests WHERE token_id = ?", arguments: [id])
            {
                var flow = ConsentWorkflow(requestID: row["id"], status: try Self.status(row["status"]))
                if flow.revoke() {
                    try db.execute(sql: "UPDATE access_app_requests SET status = ? WHERE token_id = ?", arguments: [flow.status.rawValue, id])
                }
            }
            return changed
        }
    }

    // MARK: - Apps (the consent step)

    /// An app asks for access. The secret proves later that the app collecting the token is
    /// the one that asked.
    public func createAppRequest(appName: String, deviceTypes: [DeviceTypeID]) throws(HomeError) -> (AppRequest, secret: String) {
        try createAppRequest(appName: appName, deviceTypes: deviceTypes, automationTypes: [])
    }

    /// An app asks for access and to automate some (device type, trait) pairs. They are kept
    /// with the requested device types (`requested_types`: the plain list when there are none,
    /// else `{"deviceTypes": […], "automationTypes": […]}`).
    public func createAppRequest(appName: String, deviceTypes: [DeviceTypeID], automationTypes: [AutomationType]) throws(HomeError)
        -> (AppRequest, secret: String)
    {
        guard automationTypes.count <= 256 else { throw .invalidArgument("an app may ask for at most 256 automation types") }
        let name = appName.trimmingCharacters(in: .whitespaces)
        guard (1...64).contains(name.count), !name.contains(where: { $0.isNewline }) else {
            throw .invalidArgument("an app name is 1 to 64 characters on one line (got \(appName.count))")
        }
        guard deviceTypes.count <= 256 else { throw .invalidArgument("an app may ask for at most 256 device types") }
        let id = AccessSecrets.newID(prefix: "req")
        let secret = AccessSecrets.newToken(prefix: "hreq")
        let t = now()
        let types: String
        if automationTypes.isEmpty {
            types = try Self.encodeJSON(deviceTypes)
        } else {
            types = try Self.encodeJSON(RequestedTypes(deviceTypes: deviceTypes, automationTypes: automationTypes))
        }
        try write { db in
            let pending = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_app_requests WHERE status = 'pending'") ?? 0
            guard pending < Self.maxPendingAppRequests else {
                throw HomeError(.rateLimited, "\(pending) app requests already wait for an admin; approve or deny some first")
            }
            try db.execute(
                sql: """
                    INSERT INTO access_app_requests (id, app_name, requested_types, secret_hash, status, created_at)
                    VALUES (?, ?, ?, ?, 'pending', ?)
                    """,
                arguments: [id, name, types, AccessSecrets.sha256(secret), t.timeIntervalSince1970])
        }
        return (
            AppRequest(
                id: id, appName: name, requestedDeviceTypes: deviceTypes, status: .pending, scope: nil, decidedBy: nil, createdAt: t,
                requestedAutomationTypes: automationTypes.isEmpty ? nil : automationTypes),
            secret
        )
    }

    /// One request, or `notFound`.
    public func appRequest(id: String) throws(HomeError) -> AppRequest {
        guard let r = try appRequests(where: "id = ?", [id]).first else { throw .notFound("no app request \(id)") }
        return r
    }

    /// Requests, newest first; `pending` only when asked.
    public func appRequests(pendingOnly: Bool = false) throws(HomeError) -> [AppRequest] {
        try appRequests(where: pendingOnly ? "status = 'pending'" : "1", [])
    }

    /// Checks an app's request secret.
    public func verifyRequestSecret(id: String, secret: String) throws(HomeError) {
        let stored = try read { db in
            try String.fetchOne(db, sql: "SELECT secret_hash FROM access_app_requests WHERE id = ?", arguments: [id])
        }
        guard let stored else { throw .notFound("no app request \(id)") }
        guard AccessSecrets.constantTimeEqual(Array(stored.utf8), Array(AccessSecrets.sha256(secret).utf8)) else {
            throw .permissionDenied("that secret does not belong to app request \(id)")
        }
    }

    /// An admin approves a pending request with the scope they chose.
    public func approve(requestID: String, scope: GrantScope, by admin: String) throws(HomeError) -> AppRequest {
        let encoded = try Self.encodeJSON(scope)
        try decide(requestID, { flow throws(HomeError) in try flow.approve() }, scope: encoded, by: admin)
        return try appRequest(id: requestID)
    }

    /// An admin denies a pending request.
    public func deny(requestID: String, by admin: String) throws(HomeError) -> AppRequest {
        try decide(requestID, { flow throws(HomeError) in try flow.deny() }, scope: nil, by: admin)
        return try appRequest(id: requestID)
    }

    func decide(_ id: String, _ transition: (inout ConsentWorkflow) throws(HomeError) -> Void, scope: String?, by admin: String) throws(HomeError) {
        try write { db in
            guard let current = try String.fetchOne(db, sql: "SELECT status FROM access_app_requests WHERE id = ?", arguments: [id]) else {
                throw HomeError.notFound("no app request \(id)")
            }
            var flow = ConsentWorkflow(requestID: id, status: try Self.status(current))
            try transition(&flow)
            try db.execute(
                sql: "UPDATE access_app_requests SET status = ?, scope = ?, decided_by = ? WHERE id = ?",
                arguments: [flow.status.rawValue, scope, admin, id])
        }
    }

    /// The app collects its token, once, after approval.
    ///
    /// - Returns: nil while the request is pending.
    /// - Throws: `permissionDenied` when denied or revoked, `conflict` when already collected.
    /// - Parameter strictOperationValidation: the app's validation mode, kept in the grant's
    ///   scope (nil: the daemon's setting).
    public func claimToken(requestID: String, secret: String, strictOperationValidation: Bool? = nil) throws(HomeError) -> IssuedToken? {
        try verifyRequestSecret(id: requestID, secret: secret)
        return try write { db -> IssuedToken? in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM access_app_requests WHERE id = ?", arguments: [requestID]) else {
                throw HomeError.notFound("no app request \(requestID)")
            }
            var flow = ConsentWorkflow(requestID: requestID, status: try Self.status(row["status"]))
            guard try flow.claim() else { return nil }
            var scope = try Self.decodeScope(row["scope"]) ?? GrantScope(deviceTypes: [], includeSensitive: false, canControl: false)
            scope.strictOperationValidation = strictOperationValidation
            let token = try self.issue(db, kind: "app", subject: row["app_name"], role: .app, scope: scope, requestID: requestID)
            try db.execute(
                sql: "UPDATE access_app_requests SET status = ?, token_id = ? WHERE id = ?",
                arguments: [flow.status.rawValue, token.id, requestID])
            return token
        }
    }

    /// App grants (issued tokens), newest first.
    public func grants(includeRevoked: Bool = false) throws(HomeError) -> [AppGrant] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT * FROM access_tokens WHERE kind = 'app'" + (includeRevoked ? "" : " AND revoked_at IS NULL")
                    + " ORDER BY created_at DESC"
            ).map {
                AppGrant(
                    id: $0["id"], requestID: $0["request_id"] ?? "", appName: $0["subject"],
                    scope: try Self.decodeScope($0["scope"]) ?? GrantScope(deviceTypes: [], includeSensitive: false),
                    createdAt: Date(timeIntervalSince1970: $0["created_at"]), revoked: ($0["revoked_at"] as Double?) != nil)
            }
        }
    }

    // MARK: - Helpers

    func issue(_ db: Database, kind: String, subject: String, role: Principal.Role, scope: GrantScope?, requestID: String?) throws
        -> IssuedToken
    {
        let token = AccessSecrets.newToken(prefix: kind == "app" ? "happ" : "husr")
        let id = AccessSecrets.newID(prefix: "tok")
        try db.execute(
            sql: """
                INSERT INTO access_tokens (id, hash, kind, subject, role, scope, request_id, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                id, AccessSecrets.sha256(token), kind, subject, role.rawValue, try scope.map(Self.encodeJSON), requestID,
                now().timeIntervalSince1970,
            ])
        let principal = Principal(id: "\(kind):\(subject)", role: role, scope: scope, sessionID: id)
        return IssuedToken(token: token, id: id, principal: principal)
    }

    func appRequests(where clause: String, _ arguments: StatementArguments) throws(HomeError) -> [AppRequest] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM access_app_requests WHERE \(clause) ORDER BY created_at DESC", arguments: arguments).map {
                let requested = try RequestedTypes.decode($0["requested_types"] as String)
                return AppRequest(
                    id: $0["id"], appName: $0["app_name"], requestedDeviceTypes: requested.deviceTypes,
                    status: AppRequest.Status(rawValue: $0["status"]) ?? .denied, scope: try Self.decodeScope($0["scope"]),
                    decidedBy: $0["decided_by"], createdAt: Date(timeIntervalSince1970: $0["created_at"]),
                    requestedAutomationTypes: requested.automationTypes.isEmpty ? nil : requested.automationTypes)
            }
        }
    }

    /// The decoy hash, made once.
    func decoy() throws(HomeError) -> String {
        if let hash = decoyHash.withLock({ $0 }) { return hash }
        let hash = try hashPassword(AccessSecrets.newToken(prefix: "decoy"))
        decoyHash.withLock { $0 = hash }
        return hash
    }

    func hashPassword(_ password: String) throws(HomeError) -> String {
        do {
            return try AccessSecrets.hashPassword(password, rounds: passwordRounds)
        } catch {
            throw .internal("could not hash the password: \(error)")
        }
    }

    static func checkUsername(_ name: String) throws(HomeError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
        guard (1...32).contains(name.count), name.allSatisfy({ allowed.contains($0) }) else {
            throw .invalidArgument("a username is 1 to 32 characters of a-z, 0-9, '.', '_' or '-' (got '\(name)')")
        }
    }

    static func checkPassword(_ password: String) throws(HomeError) {
        guard password.count >= 8 else { throw .invalidArgument("a password needs at least 8 characters") }
        guard password.utf8.count <= 1024 else { throw .invalidArgument("a password may have at most 1024 bytes") }
    }

    static func encodeJSON(_ value: some Encodable) throws(HomeError) -> String {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw .internal("could not encode \(value): \(error)")
        }
    }

    /// A stored request status; an unknown one is a damaged database, not a denial.
    static func status(_ text: String) throws(HomeError) -> AppRequest.Status {
        guard let status = AppRequest.Status(rawValue: text) else {
            throw .internal("the access database holds an unknown app request status '\(text)'")
        }
        return status
    }

    static func decodeScope(_ text: String?) throws -> GrantScope? {
        guard let text else { return nil }
        return try JSONDecoder().decode(GrantScope.self, from: Data(text.utf8))
    }

    func read<T>(_ body: (Database) throws -> T) throws(HomeError) -> T {
        do {
            return try writer.read { db in try body(db) }
        } catch let e as HomeError {
            throw e
        } catch {
            throw .internal("the access database failed: \(error)")
        }
    }

    func write<T>(_ body: (Database) throws -> T) throws(HomeError) -> T {
        do {
            return try writer.write { db in try body(db) }
        } catch let e as HomeError {
            throw e
        } catch {
            throw .internal("the access database failed: \(error)")
        }
    }
}

extension AccessStore {
    /// Reads from the database once: throws when the storage cannot answer (for `/readyz`).
    public func checkReadable() throws(HomeError) {
        _ = try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_users") }
    }
}

extension AccessStore {
    /// An access store on a private in-memory SQLite database, with its tables: for tests and
    /// tools that need the real store without a file.
    public static func inMemory(passwordRounds: Int = 600_000, now: @escaping @Sendable () -> Date = { Date() }) throws(HomeError) -> AccessStore {
        do {
            let queue = try DatabaseQueue()
            var migrator = DatabaseMigrator()
            registerMigrations(in: &migrator)
            try migrator.migrate(queue)
            return AccessStore(writer: queue, passwordRounds: passwordRounds, now: now)
        } catch {
            throw .internal("could not open an in-memory access database: \(error)")
        }
    }
}

extension HearthDatabase {
    /// The access store on this database. Open the database with
    /// `extraMigrations: AccessStore.registerMigrations(in:)` so its tables exist.
    public func accessStore(passwordRounds: Int = 600_000) -> AccessStore {
        AccessStore(writer: pool, passwordRounds: passwordRounds)
    }
}

/// What an app request asked for, as `requested_types` keeps it: a plain list of device types
/// (requests without automation types, and every older row), or an object with both.
struct RequestedTypes: Codable {
    var deviceTypes: [DeviceTypeID]
    var automationTypes: [AutomationType]

    static func decode(_ text: String) throws -> RequestedTypes {
        let data = Data(text.utf8)
        if let list = try? JSONDecoder().decode([DeviceTypeID].self, from: data) { return RequestedTypes(deviceTypes: list, automationTypes: []) }
        return try JSONDecoder().decode(RequestedTypes.self, from: data)
    }
}
