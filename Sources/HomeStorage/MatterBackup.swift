import Foundation
import GRDB

/// `hearthd backup` / `restore`: the Matter bridge's state file (fabrics with their NOCs and
/// operational keys, the ACL, counters, CASE resumption records, the onboarding secrets) beside
/// the layout backup, as `<backup>.matter.sqlite` (mode 0600), so a restore keeps every
/// controller paired.
public enum MatterBackup {
    /// `matter.sqlite` beside a database (what `matter.state` defaults to).
    public static func defaultPath(database: String) -> String {
        ((database as NSString).deletingLastPathComponent as NSString).appendingPathComponent("matter.sqlite")
    }

    /// Where a backup keeps the Matter state: `<backup>.matter.sqlite`.
    public static func backupPath(for backup: String) -> String { backup + ".matter.sqlite" }

    /// Saves the state file (`state`, or `matter.sqlite` beside the database) to
    /// `<output>.matter.sqlite`; returns that path, or nil when there is no Matter state.
    /// One consistent snapshot (SQLite's online backup): safe while hearthd runs.
    public static func save(database: String, output: String, state: String? = nil) throws -> String? {
        let state = state ?? defaultPath(database: database)
        guard FileManager.default.fileExists(atPath: state) else { return nil }
        let target = backupPath(for: output)
        try copy(state, to: target)
        return target
    }

    /// Restores `<input>.matter.sqlite` to the state file (`state`, or `matter.sqlite` beside
    /// the database; hearthd stopped); returns the source, or nil when the backup has none.
    public static func restore(database: String, input: String, state: String? = nil) throws -> String? {
        let source = backupPath(for: input)
        guard FileManager.default.fileExists(atPath: source) else { return nil }
        try copy(source, to: state ?? defaultPath(database: database))
        return source
    }

    /// Copies one SQLite file to `target` (replacing it and its WAL side files: a stale WAL
    /// would otherwise be replayed over the copy), mode 0600.
    static func copy(_ source: String, to target: String) throws {
        let fm = FileManager.default
        for file in [target, target + "-wal", target + "-shm"] { try? fm.removeItem(atPath: file) }
        _ = fm.createFile(atPath: target, contents: nil, attributes: [.posixPermissions: 0o600])
        let from = try DatabaseQueue(path: source)
        let to = try DatabaseQueue(path: target)
        try from.backup(to: to)
        try to.close()
        try from.close()
        try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target)
    }
}
