public import Foundation
public import GRDB
public import HomeCore
public import HomeModel

/// Scenes, automations and their durable timers (HomeCore's ``SceneStore`` and
/// ``AutomationStore``), in SQLite, in the same file as the layout (migration `automation-v1`).
///
/// Every write is its own transaction with `synchronous = FULL` (``HearthDatabase``), so a timer
/// saved before a delay starts is on disk when the process is killed during it.
///
/// ```swift
/// let db = try HearthDatabase(path: path, extraMigrations: AutomationStateStore.registerMigrations(in:))
/// let scenes = try SceneBook(core: core, store: db.automationStore())
/// ```
public final class AutomationStateStore: SceneStore, AutomationStore, AutomationTraceStore {
    let writer: any DatabaseWriter
    let now: @Sendable () -> Date

    public init(writer: any DatabaseWriter, now: @escaping @Sendable () -> Date = { Date() }) {
        self.writer = writer
        self.now = now
    }

    /// Adds the scene, automation and timer tables (identifiers prefixed `automation-`).
    public static func registerMigrations(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("automation-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE scene (
                        id TEXT PRIMARY KEY NOT NULL,
                        structure_id TEXT NOT NULL,
                        room_id TEXT,
                        name TEXT NOT NULL,
                        transition_ms INTEGER NOT NULL DEFAULT 0 CHECK (transition_ms BETWEEN 0 AND 60000000),
                        allow_sensitive INTEGER NOT NULL DEFAULT 0,
                        source TEXT NOT NULL CHECK (source IN ('api', 'config')),
                        config_ref TEXT,
                        revision INTEGER NOT NULL DEFAULT 1,
                        created_at DOUBLE NOT NULL,
                        updated_at DOUBLE NOT NULL,
                        last_recalled_at DOUBLE,
                        UNIQUE (structure_id, name)
                    );
                    CREATE TABLE scene_target (
                        scene_id TEXT NOT NULL REFERENCES scene(id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        device_id TEXT NOT NULL,
                        device_type TEXT NOT NULL,
                        trait TEXT NOT NULL,
                        attribute TEXT NOT NULL,
                        value_json TEXT NOT NULL,
                        PRIMARY KEY (scene_id, device_id, device_type, trait, attribute)
                    );
                    CREATE TABLE automation (
                        id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('enabled', 'disabled', 'draft', 'suspended')),
                        suspended_reason TEXT,
                        graph_json TEXT NOT NULL,
                        graph_version INTEGER NOT NULL,
                        execution_count INTEGER NOT NULL DEFAULT 0,
                        owner TEXT NOT NULL,
                        source TEXT NOT NULL CHECK (source IN ('api', 'config')),
                        config_ref TEXT,
                        revision INTEGER NOT NULL,
                        created_at DOUBLE NOT NULL,
                        updated_at DOUBLE NOT NULL
                    );
                    CREATE TABLE automation_timer (
                        id TEXT PRIMARY KEY NOT NULL,
                        automation_id TEXT NOT NULL REFERENCES automation(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL,
                        due_at DOUBLE NOT NULL,
                        payload_json TEXT NOT NULL
                    );
                    CREATE INDEX automation_timer_due ON automation_timer(due_at);
                    """)
        }
        // Run traces survive a restart: the newest 50 per automation (``saveTraces(_:keep:)``).
        migrator.registerMigration("automation-v2-runs") { db in
            try db.execute(
                sql: """
                    CREATE TABLE automation_run (
                        id TEXT PRIMARY KEY NOT NULL,
                        automation_id TEXT NOT NULL,
                        started_at DOUBLE NOT NULL,
                        outcome TEXT NOT NULL,
                        trace_json TEXT NOT NULL
                    );
                    CREATE INDEX automation_run_recent ON automation_run(automation_id, started_at DESC);
                    """)
        }
    }

    func read<T: Sendable>(_ what: String, _ body: @Sendable (Database) throws -> T) throws(HomeError) -> T {
        do { return try writer.read(body) } catch let e as HomeError { throw e } catch {
            throw .internal("the \(what) could not be read: \(error)")
        }
    }

    func write<T: Sendable>(_ what: String, _ body: @Sendable (Database) throws -> T) throws(HomeError) -> T {
        do { return try writer.write(body) } catch let e as HomeError { throw e } catch {
            throw .internal("the \(what) could not be saved: \(error)")
        }
    }

    // MARK: - Scenes

    public func loadScenes() throws(HomeError) -> [Scene] {
        try read("scenes") { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM scene ORDER BY id")
            return try rows.map { row -> Scene in
                let id: String = row["id"]
                let targets = try Row.fetchAll(db, sql: "SELECT * FROM scene_target WHERE scene_id = ? ORDER BY position", arguments: [id]).map { t in
                    let value = try JSONDecoder().decode(Value.self, from: Data((t["value_json"] as String).utf8))
                    return SceneTarget(
                        device: DeviceID(rawValue: t["device_id"]), deviceType: DeviceTypeID(Self.hex(t["device_type"])),
                        trait: TraitID(Self.hex(t["trait"])), attribute: AttributeID(Self.hex(t["attribute"])), value: value)
                }
                let room: String? = row["room_id"]
                return Scene(
                    id: id, name: row["name"], structureID: StructureID(rawValue: row["structure_id"]), roomID: room.map { RoomID(rawValue: $0) },
                    transitionMilliseconds: row["transition_ms"], targets: targets, allowSensitive: row["allow_sensitive"], revision: row["revision"],
                    source: row["source"], configRef: row["config_ref"])
            }
        }
    }

    static func hex(_ s: String) -> UInt32 { UInt32(s.dropFirst(2), radix: 16) ?? 0 }

    public func saveScene(_ scene: Scene) throws(HomeError) {
        let at = now().timeIntervalSince1970
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var values: [String] = []
        for t in scene.targets {
            guard let data = try? encoder.encode(t.value) else { throw .internal("could not encode a scene value") }
            values.append(String(decoding: data, as: UTF8.self))
        }
        try write("scene") { [values] db in
            try db.execute(
                sql: """
                    INSERT INTO scene (id, structure_id, room_id, name, transition_ms, allow_sensitive, source, config_ref, revision, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET structure_id = excluded.structure_id, room_id = excluded.room_id, name = excluded.name,
                        transition_ms = excluded.transition_ms, allow_sensitive = excluded.allow_sensitive, source = excluded.source,
                        config_ref = excluded.config_ref, revision = excluded.revision, updated_at = excluded.updated_at
                    """,
                arguments: [
                    scene.id, scene.structureID.rawValue, scene.roomID?.rawValue, scene.name, scene.transitionMilliseconds, scene.allowSensitive,
                    scene.source, scene.configRef, scene.revision, at, at,
                ])
            try db.execute(sql: "DELETE FROM scene_target WHERE scene_id = ?", arguments: [scene.id])
            for (i, t) in scene.targets.enumerated() {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO scene_target (scene_id, position, device_id, device_type, trait, attribute, value_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [scene.id, i, t.device.rawValue, t.deviceType.hex, t.trait.hex, t.attribute.hex, values[i]])
            }
        }
    }

    public func deleteScene(id: String) throws(HomeError) {
        try write("scene") { db in try db.execute(sql: "DELETE FROM scene WHERE id = ?", arguments: [id]) }
    }

    public func markRecalled(id: String, at: Date) throws(HomeError) {
        try write("scene") { db in
            try db.execute(sql: "UPDATE scene SET last_recalled_at = ? WHERE id = ?", arguments: [at.timeIntervalSince1970, id])
        }
    }

    // MARK: - Automations

    public func loadAutomations() throws(HomeError) -> [StoredAutomation] {
        try read("automations") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM automation ORDER BY id").map { r in
                StoredAutomation(
                    id: r["id"], name: r["name"], state: r["state"], suspendedReason: r["suspended_reason"], graphJSON: r["graph_json"],
                    graphVersion: r["graph_version"], executionCount: r["execution_count"], owner: r["owner"], source: r["source"],
                    configRef: r["config_ref"], revision: r["revision"])
            }
        }
    }

    public func saveAutomation(_ a: StoredAutomation) throws(HomeError) {
        let at = now().timeIntervalSince1970
        try write("automation") { db in
            try db.execute(
                sql: """
                    INSERT INTO automation (id, name, state, suspended_reason, graph_json, graph_version, execution_count, owner, source,
                        config_ref, revision, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET name = excluded.name, state = excluded.state, suspended_reason = excluded.suspended_reason,
                        graph_json = excluded.graph_json, graph_version = excluded.graph_version, execution_count = excluded.execution_count,
                        owner = excluded.owner, source = excluded.source, config_ref = excluded.config_ref, revision = excluded.revision,
                        updated_at = excluded.updated_at
                    """,
                arguments: [
                    a.id, a.name, a.state, a.suspendedReason, a.graphJSON, a.graphVersion, a.executionCount, a.owner, a.source, a.configRef,
                    a.revision, at, at,
                ])
        }
    }

    public func deleteAutomation(id: String) throws(HomeError) {
        try write("automation") { db in
            try db.execute(sql: "DELETE FROM automation_timer WHERE automation_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM automation_run WHERE automation_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM automation WHERE id = ?", arguments: [id])
        }
    }

    // MARK: - Timers

    public func loadTimers() throws(HomeError) -> [StoredTimer] {
        try read("automation timers") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM automation_timer ORDER BY due_at, id").map { r in
                StoredTimer(
                    id: r["id"], automationID: r["automation_id"], kind: r["kind"], dueAt: Date(timeIntervalSince1970: r["due_at"]),
                    payloadJSON: r["payload_json"])
            }
        }
    }

    public func saveTimer(_ t: StoredTimer) throws(HomeError) {
        try write("automation timer") { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO automation_timer (id, automation_id, kind, due_at, payload_json) VALUES (?, ?, ?, ?, ?)",
                arguments: [t.id, t.automationID, t.kind, t.dueAt.timeIntervalSince1970, t.payloadJSON])
        }
    }

    public func deleteTimer(id: String) throws(HomeError) {
        try write("automation timer") { db in try db.execute(sql: "DELETE FROM automation_timer WHERE id = ?", arguments: [id]) }
    }
}

// MARK: - Run traces

extension AutomationStateStore {
    public func saveTraces(_ traces: [StoredTrace], keep: Int) throws(HomeError) {
        guard !traces.isEmpty else { return }
        try write("automation runs") { db in
            for t in traces {
                try db.execute(
                    sql: """
                        INSERT INTO automation_run (id, automation_id, started_at, outcome, trace_json) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT(id) DO UPDATE SET outcome = excluded.outcome, trace_json = excluded.trace_json
                        """,
                    arguments: [t.id, t.automationID, t.startedAt.timeIntervalSince1970, t.outcome, t.traceJSON])
            }
            for automation in Set(traces.map(\.automationID)) {
                try db.execute(
                    sql: """
                        DELETE FROM automation_run WHERE automation_id = ?1 AND id NOT IN (
                            SELECT id FROM automation_run WHERE automation_id = ?1 ORDER BY started_at DESC, rowid DESC LIMIT ?2)
                        """,
                    arguments: [automation, keep])
            }
        }
    }

    public func loadTraces() throws(HomeError) -> [StoredTrace] {
        try read("automation runs") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM automation_run ORDER BY started_at, rowid").map { r in
                StoredTrace(
                    id: r["id"], automationID: r["automation_id"], startedAt: Date(timeIntervalSince1970: r["started_at"]), outcome: r["outcome"],
                    traceJSON: r["trace_json"])
            }
        }
    }
}

extension HearthDatabase {
    /// The scene and automation store on this database. Open the database with
    /// `extraMigrations: AutomationStateStore.registerMigrations(in:)` so its tables exist.
    public func automationStore() -> AutomationStateStore { AutomationStateStore(writer: pool) }
}
