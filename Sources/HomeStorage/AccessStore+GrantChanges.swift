import Foundation
import GRDB
public import HomeCore
public import HomeModel

/// Permission changes (Google Home APIs `presentPermissionsUpdate`): an app with a live grant
/// asks for another scope; an admin approves (the grant changes in the same transaction) or
/// denies. Rows live in `access_grant_changes`, linked to the grant's token.
extension AccessStore {
    /// At most this many changes wait at once (each app holds at most one; this bounds the rest).
    public static let maxPendingGrantChanges = 100

    public func requestGrantChange(grantID: String, deviceTypes: [DeviceTypeID]) throws(HomeError) -> GrantChange {
        guard deviceTypes.count <= 256 else { throw .invalidArgument("an app may ask for at most 256 device types") }
        let id = AccessSecrets.newID(prefix: "chg")
        let t = now()
        let types = try Self.encodeJSON(deviceTypes)
        return try write { db -> GrantChange in
            guard
                let app = try String.fetchOne(
                    db, sql: "SELECT subject FROM access_tokens WHERE id = ? AND kind = 'app' AND revoked_at IS NULL", arguments: [grantID])
            else { throw HomeError.notFound("no live grant \(grantID)") }
            try db.execute(
                sql: "UPDATE access_grant_changes SET status = 'superseded', decided_at = ? WHERE grant_id = ? AND status = 'pending'",
                arguments: [t.timeIntervalSince1970, grantID])
            let pending = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_grant_changes WHERE status = 'pending'") ?? 0
            guard pending < Self.maxPendingGrantChanges else {
                throw HomeError(.rateLimited, "\(pending) permission changes already wait for an admin; approve or deny some first")
            }
            try db.execute(
                sql: "INSERT INTO access_grant_changes (id, grant_id, requested_types, status, created_at) VALUES (?, ?, ?, 'pending', ?)",
                arguments: [id, grantID, types, t.timeIntervalSince1970])
            return GrantChange(
                id: id, grantID: grantID, appName: app, requestedDeviceTypes: deviceTypes, status: .pending, scope: nil, decidedBy: nil,
                createdAt: t)
        }
    }

    public func grantChange(id: String) throws(HomeError) -> GrantChange {
        guard let change = try read({ db in try Self.grantChanges(db, where: "c.id = ?", [id]).first }) else {
            throw .notFound("no permission change \(id)")
        }
        return change
    }

    public func grantChanges(pendingOnly: Bool = false) throws(HomeError) -> [GrantChange] {
        try read { db in try Self.grantChanges(db, where: pendingOnly ? "c.status = 'pending'" : "1", []) }
    }

    public func approveGrantChange(id: String, scope: GrantScope, by admin: String) throws(HomeError) -> GrantChange {
        try decideGrantChange(id, .approved, scope: scope, by: admin)
    }

    public func denyGrantChange(id: String, by admin: String) throws(HomeError) -> GrantChange {
        try decideGrantChange(id, .denied, scope: nil, by: admin)
    }

    /// Decides a pending change; an approval writes the grant's new scope in the same transaction.
    func decideGrantChange(_ id: String, _ next: GrantChange.Status, scope: GrantScope?, by admin: String) throws(HomeError) -> GrantChange {
        try write { db -> GrantChange in
            guard var change = try Self.grantChanges(db, where: "c.id = ?", [id]).first else {
                throw HomeError.notFound("no permission change \(id)")
            }
            try change.decide(next)
            var stored: String?
            if var scope {
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT scope FROM access_tokens WHERE id = ? AND kind = 'app' AND revoked_at IS NULL",
                        arguments: [change.grantID])
                else { throw HomeError.notFound("the grant \(change.grantID) of permission change \(id) was revoked") }
                scope.strictOperationValidation = try Self.decodeScope(row["scope"])?.strictOperationValidation
                let encoded = try Self.encodeJSON(scope)
                try db.execute(sql: "UPDATE access_tokens SET scope = ? WHERE id = ?", arguments: [encoded, change.grantID])
                stored = encoded
            }
            try db.execute(
                sql: "UPDATE access_grant_changes SET status = ?, scope = ?, decided_by = ?, decided_at = ? WHERE id = ?",
                arguments: [change.status.rawValue, stored, admin, self.now().timeIntervalSince1970, id])
            guard let decided = try Self.grantChanges(db, where: "c.id = ?", [id]).first else {
                throw HomeError.internal("permission change \(id) vanished while it was decided")
            }
            return decided
        }
    }

    static func grantChanges(_ db: Database, where clause: String, _ arguments: StatementArguments) throws -> [GrantChange] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT c.*, t.subject AS app_name FROM access_grant_changes c JOIN access_tokens t ON t.id = c.grant_id
                WHERE \(clause) ORDER BY c.created_at DESC, c.rowid DESC
                """, arguments: arguments
        ).map { row in
            let text: String = row["status"]
            guard let status = GrantChange.Status(rawValue: text) else {
                throw HomeError.internal("the access database holds an unknown permission change status '\(text)'")
            }
            return GrantChange(
                id: row["id"], grantID: row["grant_id"], appName: row["app_name"],
                requestedDeviceTypes: try JSONDecoder().decode([DeviceTypeID].self, from: Data((row["requested_types"] as String).utf8)),
                status: status, scope: try decodeScope(row["scope"]), decidedBy: row["decided_by"],
                createdAt: Date(timeIntervalSince1970: row["created_at"]))
        }
    }
}
