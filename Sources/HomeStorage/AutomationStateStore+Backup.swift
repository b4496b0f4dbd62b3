import Foundation
import GRDB
import HomeModel

/// Scenes, automations and their pending timers in a backup: the rows of the `automation-v1`
/// tables, column by column, so nothing the engine keeps (revisions, execution counts, a
/// timer's due time and where its run resumes) is lost on the way.
///
/// A restore replaces those tables with the backup's. A timer whose due time passed while the
/// backup sat on the shelf is handled by the engine at start like any other overdue timer
/// (a delay resumes at once, a schedule within `catchUp` runs once).
public struct AutomationBackup: Hashable, Sendable, Codable {
    /// A column's value: SQLite's null, integer, real or text (the tables hold no blobs).
    public enum Cell: Hashable, Sendable, Codable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)

        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null } else if let i = try? c.decode(Int64.self) { self = .integer(i) } else if let d = try? c.decode(Double.self) {
                self = .real(d)
            } else { self = .text(try c.decode(String.self)) }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .null: try c.encodeNil()
            case .integer(let i): try c.encode(i)
            case .real(let d): try c.encode(d)
            case .text(let s): try c.encode(s)
            }
        }
    }

    public typealias Rows = [[String: Cell]]

    public var scenes: Rows
    public var sceneTargets: Rows
    public var automations: Rows
    public var timers: Rows

    /// The backup's keys and the tables they come from, in the order a restore inserts them.
    static var tables: [(key: WritableKeyPath<AutomationBackup, Rows>, table: String)] {
        [
        (\.scenes, "scene"), (\.sceneTargets, "scene_target"), (\.automations, "automation"), (\.timers, "automation_timer"),
        ]
    }

    public init(scenes: Rows = [], sceneTargets: Rows = [], automations: Rows = [], timers: Rows = []) {
        self.scenes = scenes
        self.sceneTargets = sceneTargets
        self.automations = automations
        self.timers = timers
    }
}

extension AutomationBackup.Cell {
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let i): self = .integer(i)
        case .double(let d): self = .real(d)
        case .string(let s): self = .text(s)
        case .blob(let b): self = .text(String(decoding: b, as: UTF8.self))
        }
    }

    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let i): i.databaseValue
        case .real(let d): d.databaseValue
        case .text(let s): s.databaseValue
        }
    }
}

extension AutomationStateStore {
    /// Whether `db` has the automation tables (the daemon's database has; a bare layout file has not).
    static func hasTables(_ db: Database) throws -> Bool {
        try db.tableExists("automation") && db.tableExists("automation_timer") && db.tableExists("scene")
    }

    /// The automation tables' rows, or nil when the file has no such tables.
    static func export(_ db: Database) throws -> AutomationBackup? {
        guard try hasTables(db) else { return nil }
        var backup = AutomationBackup()
        for (key, table) in AutomationBackup.tables {
            backup[keyPath: key] = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY rowid").map { row in
                Dictionary(uniqueKeysWithValues: row.columnNames.map { ($0, AutomationBackup.Cell(row[$0] as DatabaseValue)) })
            }
        }
        return backup
    }

    /// Problems that would make ``restore(_:into:)`` fail, each naming the row: a column the
    /// table does not have, a target of a scene the backup lacks, a timer of a missing automation.
    static func problems(in backup: AutomationBackup, columns: [String: Set<String>]) -> [String] {
        var problems: [String] = []
        for (key, table) in AutomationBackup.tables {
            guard let known = columns[table] else { continue }
            for (i, row) in backup[keyPath: key].enumerated() {
                let unknown = Set(row.keys).subtracting(known)
                if !unknown.isEmpty { problems.append("\(table) row \(i + 1) has unknown columns \(unknown.sorted().joined(separator: ", "))") }
            }
        }
        func ids(_ rows: AutomationBackup.Rows) -> Set<String> {
            Set(rows.compactMap { if case .text(let s)? = $0["id"] { s } else { nil } })
        }
        let scenes = ids(backup.scenes)
        let automations = ids(backup.automations)
        for t in backup.sceneTargets {
            if case .text(let s)? = t["scene_id"], !scenes.contains(s) { problems.append("a target of scene \(s), which the backup does not have") }
        }
        for t in backup.timers {
            if case .text(let a)? = t["automation_id"], !automations.contains(a) {
                problems.append("a timer of automation \(a), which the backup does not have")
            }
        }
        return problems
    }

    /// The columns of the automation tables in `db`.
    static func columns(_ db: Database) throws -> [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        for (_, table) in AutomationBackup.tables { result[table] = Set(try db.columns(in: table).map(\.name)) }
        return result
    }

    /// Replaces the automation tables' rows with the backup's (inside the caller's transaction).
    static func restore(_ backup: AutomationBackup, into db: Database) throws {
        for (_, table) in AutomationBackup.tables.reversed() { try db.execute(sql: "DELETE FROM \(table)") }
        for (key, table) in AutomationBackup.tables {
            for row in backup[keyPath: key] {
                let names = row.keys.sorted()
                // Column names were checked against the table's own (``problems(in:columns:)``).
                let sql = "INSERT INTO \(table) (\(names.map { "\"\($0)\"" }.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
                try db.execute(sql: sql, arguments: StatementArguments(names.map { row[$0]!.databaseValue }))
            }
        }
    }
}
