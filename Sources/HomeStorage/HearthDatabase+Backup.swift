import Foundation
import GRDB
import Synchronization
public import HomeModel

/// The layout and device registry as a file: what `hearth backup` writes and `hearth restore`
/// reads. JSON, versioned, readable by a person.
public struct LayoutExport: Hashable, Sendable, Codable {
    /// Always `hearth-layout`.
    public var format: String
    /// The export format's version (this build writes 1).
    public var formatVersion: Int
    /// The schema (migration identifiers) of the database it was taken from.
    public var schema: [String]
    /// When it was taken (ISO 8601).
    public var exportedAt: String
    public var structures: [StructureSnapshot]
    public var rooms: [RoomSnapshot]
    public var devices: [RegistryEntry]
    /// Scenes, automations and pending timers (format 2; absent in format 1 backups and in a
    /// file without the automation tables). A restore without it leaves them as they were.
    public var automation: AutomationBackup?

    public static let formatName = "hearth-layout"
    /// 2 added ``automation``: a Hearth that reads only 1 refuses it rather than drop the scenes.
    public static let currentFormatVersion = 2
}

extension HearthDatabase {
    /// The layout and registry at one instant (a read transaction: safe while hearthd runs).
    public func exportLayout() throws(HomeError) -> LayoutExport {
        try flushDriverRows()
        let path = self.path
        let (structures, rooms, devices, schema, automation) = try read { db in
            let s = try Row.fetchAll(db, sql: "SELECT id, name FROM structure ORDER BY id").map {
                StructureSnapshot(id: StructureID(rawValue: $0["id"]), name: $0["name"])
            }
            let r = try Row.fetchAll(db, sql: "SELECT id, structureID, name FROM room ORDER BY id").map {
                RoomSnapshot(id: RoomID(rawValue: $0["id"]), structureID: StructureID(rawValue: $0["structureID"]), name: $0["name"])
            }
            let d = try Row.fetchAll(db, sql: "SELECT * FROM device ORDER BY id").map { try Self.entry($0, path: path) }
            let m = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
            return (s, r, d, m, try AutomationStateStore.export(db))
        }
        return LayoutExport(
            format: LayoutExport.formatName, formatVersion: LayoutExport.currentFormatVersion, schema: schema,
            exportedAt: ISO8601DateFormatter().string(from: Date()), structures: structures, rooms: rooms, devices: devices,
            automation: automation)
    }

    /// Writes ``exportLayout()`` as JSON to `file` (atomically: a reader never sees half a file).
    public func backup(to file: String) throws(HomeError) {
        let export = try exportLayout()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try encoder.encode(export).write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            throw .storage("\(file): cannot write the backup: \(error.localizedDescription)")
        }
    }

    /// Reads a backup file written by ``backup(to:)``.
    ///
    /// - Throws: `invalidArgument` naming the file when it is not a Hearth layout backup or was
    ///   written by a newer Hearth.
    public func readBackup(_ file: String) throws(HomeError) -> LayoutExport {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw .invalidArgument("\(file): cannot read the backup file")
        }
        let export: LayoutExport
        do {
            export = try JSONDecoder().decode(LayoutExport.self, from: data)
        } catch {
            throw .invalidArgument("\(file): not a Hearth layout backup (\(error))")
        }
        guard export.format == LayoutExport.formatName else {
            throw .invalidArgument("\(file): not a Hearth layout backup (format '\(export.format)')")
        }
        guard export.formatVersion <= LayoutExport.currentFormatVersion else {
            throw .invalidArgument(
                "\(file): written by a newer Hearth (backup format \(export.formatVersion); this version reads "
                    + "\(LayoutExport.currentFormatVersion)). Restore it with the newer Hearth.")
        }
        let unknown = Set(export.schema).subtracting(knownMigrations)
        guard unknown.isEmpty else {
            throw .invalidArgument(
                "\(file): taken from a newer Hearth database (schema steps this version does not know: "
                    + "\(unknown.sorted().joined(separator: ", "))). Restore it with the newer Hearth.")
        }
        return export
    }

    /// Replaces the layout and registry with a backup's, in one transaction (all or nothing).
    ///
    /// Stop hearthd first: a running daemon keeps its own copy in memory and would write it back.
    /// - Throws: `invalidArgument` for a backup that contradicts itself (a room in a missing
    ///   structure, two rooms with one name) — the database is left as it was.
    public func restore(_ export: LayoutExport) throws(HomeError) {
        var problems: [String] = []
        let structureIDs = Set(export.structures.map(\.id))
        let roomIDs = Set(export.rooms.map(\.id))
        for s in export.structures where !NamingRules.check(s.name).isValid {
            problems.append("structure \(s.id) has an invalid name '\(s.name)'")
        }
        for r in export.rooms where !structureIDs.contains(r.structureID) {
            problems.append("room \(r.id) is in structure \(r.structureID), which the backup does not have")
        }
        for e in export.devices {
            if let s = e.device.structureID, !structureIDs.contains(s) {
                problems.append("device \(e.device.id) is in structure \(s), which the backup does not have")
            }
            if let r = e.device.roomID, !roomIDs.contains(r) {
                problems.append("device \(e.device.id) is in room \(r), which the backup does not have")
            }
        }
        if let automation = export.automation {
            let columns = try read { db in try AutomationStateStore.hasTables(db) ? try AutomationStateStore.columns(db) : nil }
            guard let columns else {
                throw .invalidArgument(
                    "the backup holds scenes and automations but \(path) has no automation tables (open it as hearthd does); nothing was changed")
            }
            problems += AutomationStateStore.problems(in: automation, columns: columns)
        }
        guard problems.isEmpty else {
            throw .invalidArgument("the backup contradicts itself: " + problems.joined(separator: "; "))
        }
        try flushDriverRows()
        do {
            try pool.write { db in
                if let automation = export.automation { try AutomationStateStore.restore(automation, into: db) }
                try db.execute(sql: "DELETE FROM device; DELETE FROM room; DELETE FROM structure;")
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                for s in export.structures {
                    try db.execute(
                        sql: "INSERT INTO structure (id, name, nameKey) VALUES (?, ?, ?)",
                        arguments: [s.id.rawValue, s.name, NamingRules.normalised(s.name)])
                }
                for r in export.rooms {
                    try db.execute(
                        sql: "INSERT INTO room (id, structureID, name, nameKey) VALUES (?, ?, ?, ?)",
                        arguments: [r.id.rawValue, r.structureID.rawValue, r.name, NamingRules.normalised(r.name)])
                }
                for e in export.devices {
                    let d = e.device
                    try db.execute(
                        sql: """
                            INSERT INTO device (id, pluginID, localID, name, structureID, roomID, commissioning,
                                manufacturer, model, types, connectivity, firstSeen, lastSeen, restoreOnStart, lastOnOff)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            d.id.rawValue, d.id.pluginID, d.id.localID, d.name, d.structureID?.rawValue, d.roomID?.rawValue,
                            d.commissioning.rawValue, d.manufacturer, d.model,
                            String(decoding: try encoder.encode(d.types), as: UTF8.self), e.connectivity.rawValue,
                            Int64(clamping: e.firstSeen), Int64(clamping: e.lastSeen), e.restoreOnStart?.rawValue, e.lastOnOff,
                        ])
                }
            }
        } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_CONSTRAINT {
            throw .invalidArgument("the backup contradicts itself: \(error.message ?? "\(error)"); nothing was changed")
        } catch {
            throw .storage("\(path): cannot restore: \(error); nothing was changed")
        }
        writtenOutputs.withLock { $0.removeAll() }
    }
}
