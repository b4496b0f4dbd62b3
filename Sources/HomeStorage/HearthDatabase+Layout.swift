import Foundation
import GRDB
public import HomeCore
public import HomeModel
import Synchronization

/// What an output (a relay, a lamp) does when Hearth starts: switch off, switch on, or come
/// back as the person left it. Without a setting Hearth leaves the output as the hardware starts.
public enum RestoreOnStart: String, Hashable, Sendable, Codable, CaseIterable {
    case off, on, last
}

/// One device in the registry, with what the layout does not show.
public struct RegistryEntry: Hashable, Sendable, Codable {
    /// The device as last saved: ID (plugin + the plugin's own identifier), name, place,
    /// commissioning state, device types and their last known attribute values.
    public var device: DeviceSnapshot
    /// The connectivity last saved (after a restart the core shows `unknown` until the plugin
    /// reports again; this keeps what was known before).
    public var connectivity: ConnectivityState
    /// When a plugin first reported the device (nanoseconds since the Unix epoch).
    public var firstSeen: UInt64
    /// When the device was last known to be reachable (nanoseconds since the Unix epoch).
    public var lastSeen: UInt64
    public var restoreOnStart: RestoreOnStart?
    /// The last On/Off value of an output device, saved on change.
    public var lastOnOff: Bool?

    public init(
        device: DeviceSnapshot, connectivity: ConnectivityState, firstSeen: UInt64, lastSeen: UInt64,
        restoreOnStart: RestoreOnStart? = nil, lastOnOff: Bool? = nil
    ) {
        self.device = device
        self.connectivity = connectivity
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.restoreOnStart = restoreOnStart
        self.lastOnOff = lastOnOff
    }
}

extension HearthDatabase: LayoutStore {
    public func loadLayout() throws -> (structures: [StructureSnapshot], rooms: [RoomSnapshot], devices: [DeviceSnapshot]) {
        try flushDriverRows()
        let path = self.path
        return try read { db in
            let structures = try Row.fetchAll(db, sql: "SELECT id, name FROM structure ORDER BY id").map {
                StructureSnapshot(id: StructureID(rawValue: $0["id"]), name: $0["name"])
            }
            let rooms = try Row.fetchAll(db, sql: "SELECT id, structureID, name FROM room ORDER BY id").map {
                RoomSnapshot(id: RoomID(rawValue: $0["id"]), structureID: StructureID(rawValue: $0["structureID"]), name: $0["name"])
            }
            let devices = try Row.fetchAll(db, sql: "SELECT * FROM device ORDER BY id").map {
                try Self.entry($0, path: path).device
            }
            return (structures, rooms, devices)
        }
    }

    /// Saves one step of the core in one transaction: all of it or, if anything fails, none.
    ///
    /// Output states are compared with what was last written (inside the write, which SQLite
    /// serialises): an unchanged value, or one older than a value already written (two plugin
    /// threads racing), costs nothing.
    ///
    /// A driver's registry rows alone (``LayoutDelta/fromDriver``, no output state, structure or
    /// room) are queued and written together (``flushDriverRows()``), committed with
    /// `synchronous = NORMAL`: still atomic and safe from a crash of the process, but without an
    /// fsync of their own (the next durable commit syncs them too). At start-up every retained
    /// MQTT device is such a row; a transaction (and an fsync) each made the discovery of 1,000
    /// devices wait on the disk 1,000 times. Anything else is written at once, durably, after
    /// the queued rows (an output state updates a row they may insert).
    public func persist(_ delta: LayoutDelta) throws {
        if delta.fromDriver, delta.outputStates.isEmpty, delta.structures == nil, delta.rooms == nil {
            if delta.isEmpty { return }
            let (next, failure) = driverRows.withLock { batch in
                defer { batch.failure = nil }
                return (batch.add(delta), batch.failure)
            }
            switch next {
            case .flushNow: try flushDriverRows()
            case .scheduleFlush: scheduleDriverRowFlush()
            case .nothing: break
            }
            // A window's flush that failed is reported to the next writer (the core logs it).
            if let failure { throw failure }
            return
        }
        try flushDriverRows()
        do {
            try write { db in
                var step = delta
                self.writtenOutputs.withLock { w in
                    for (id, on) in delta.outputStates {
                        if let last = w[id], last.version > delta.version || last.value == on {
                            step.outputStates[id] = nil
                        } else {
                            w[id] = (delta.version, on)
                        }
                    }
                }
                if step.isEmpty { return }
                try Self.apply(step, db)
            }
        } catch {
            // The transaction rolled back: forget what it would have written.
            writtenOutputs.withLock { w in for id in delta.outputStates.keys { w[id] = nil } }
            throw error
        }
    }

    static func apply(_ delta: LayoutDelta, _ db: Database) throws {
        if let structures = delta.structures {
            let keep = Set(structures.map(\.id.rawValue))
            for id in try String.fetchAll(db, sql: "SELECT id FROM structure") where !keep.contains(id) {
                try db.execute(sql: "DELETE FROM structure WHERE id = ?", arguments: [id])
            }
            for s in structures {
                try db.execute(
                    sql: """
                        INSERT INTO structure (id, name, nameKey) VALUES (?, ?, ?)
                        ON CONFLICT(id) DO UPDATE SET name = excluded.name, nameKey = excluded.nameKey
                        """,
                    arguments: [s.id.rawValue, s.name, NamingRules.normalised(s.name)])
            }
        }
        if let rooms = delta.rooms {
            let keep = Set(rooms.map(\.id.rawValue))
            for id in try String.fetchAll(db, sql: "SELECT id FROM room") where !keep.contains(id) {
                try db.execute(sql: "DELETE FROM room WHERE id = ?", arguments: [id])
            }
            for r in rooms {
                try db.execute(
                    sql: """
                        INSERT INTO room (id, structureID, name, nameKey) VALUES (?, ?, ?, ?)
                        ON CONFLICT(id) DO UPDATE SET structureID = excluded.structureID, name = excluded.name,
                            nameKey = excluded.nameKey
                        """,
                    arguments: [r.id.rawValue, r.structureID.rawValue, r.name, NamingRules.normalised(r.name)])
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for d in delta.upserted {
            let connectivity = d.sourceConnectivity.connectivityState
            let reachable = connectivity == .online || connectivity == .partiallyOnline
            let types = String(decoding: try encoder.encode(d.types), as: UTF8.self)
            try db.execute(
                sql: """
                    INSERT INTO device (id, pluginID, localID, name, structureID, roomID, commissioning,
                        manufacturer, model, types, connectivity, firstSeen, lastSeen)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET name = excluded.name, structureID = excluded.structureID,
                        roomID = excluded.roomID, commissioning = excluded.commissioning,
                        manufacturer = excluded.manufacturer, model = excluded.model, types = excluded.types,
                        connectivity = CASE WHEN excluded.connectivity = 'unknown' THEN connectivity
                            ELSE excluded.connectivity END,
                        lastSeen = CASE WHEN ? THEN MAX(lastSeen, excluded.lastSeen) ELSE lastSeen END
                    """,
                arguments: [
                    d.id.rawValue, d.id.pluginID, d.id.localID, d.name, d.structureID?.rawValue, d.roomID?.rawValue,
                    d.commissioning.rawValue, d.manufacturer, d.model, types, connectivity.rawValue,
                    Int64(clamping: delta.at), Int64(clamping: delta.at), reachable,
                ])
        }
        for id in delta.removed {
            try db.execute(sql: "DELETE FROM device WHERE id = ?", arguments: [id.rawValue])
        }
        for (id, on) in delta.outputStates {
            try db.execute(
                sql: "UPDATE device SET lastOnOff = ?, lastSeen = MAX(lastSeen, ?) WHERE id = ?",
                arguments: [on, Int64(clamping: delta.at), id.rawValue])
        }
        try db.execute(
            sql: "INSERT INTO meta (key, value) VALUES ('layoutVersion', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            arguments: [String(delta.version)])
    }

    static func entry(_ row: Row, path: String) throws -> RegistryEntry {
        let id: String = row["id"]
        let typesJSON: String = row["types"]
        let types: [DeviceTypeState]
        do {
            types = try JSONDecoder().decode([DeviceTypeState].self, from: Data(typesJSON.utf8))
        } catch {
            throw HomeError.storage("\(path): device \(id) has unreadable device types (\(error)); restore a backup")
        }
        let commissioningRaw: String = row["commissioning"]
        let device = DeviceSnapshot(
            id: DeviceID(rawValue: id), name: row["name"],
            structureID: (row["structureID"] as String?).map(StructureID.init(rawValue:)),
            roomID: (row["roomID"] as String?).map(RoomID.init(rawValue:)),
            commissioning: CommissioningState(rawValue: commissioningRaw) ?? .discovered,
            types: types, manufacturer: row["manufacturer"], model: row["model"])
        let restore: String? = row["restoreOnStart"]
        let lastOnOff: Bool? = row["lastOnOff"]
        let firstSeen: Int64 = row["firstSeen"]
        let lastSeen: Int64 = row["lastSeen"]
        return RegistryEntry(
            device: device, connectivity: ConnectivityState(rawValue: row["connectivity"]) ?? .unknown,
            firstSeen: UInt64(max(0, firstSeen)), lastSeen: UInt64(max(0, lastSeen)),
            restoreOnStart: restore.flatMap(RestoreOnStart.init(rawValue:)), lastOnOff: lastOnOff)
    }

    // MARK: - Driver rows

    /// Writes the driver rows queued by ``persist(_:)`` in one transaction (`synchronous =
    /// NORMAL`), oldest first. Every read of the registry and every other write calls it
    /// first, so they see each row; hearthd calls it once more at shutdown, and the database
    /// when it is released. Cheap when nothing waits.
    public func flushDriverRows() throws(HomeError) {
        if driverRows.withLock({ $0.isSettled }) { return }
        do {
            // Taken inside the writer: batches are written in the order they were queued, and a
            // caller that finds a batch being written waits here for its commit.
            try pool.writeWithoutTransaction { db in
                let rows = driverRows.withLock { $0.take() }
                defer { driverRows.withLock { $0.committed() } }
                if rows.isEmpty { return }
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
                try db.inTransaction {
                    for delta in rows { try Self.apply(delta, db) }
                    return .commit
                }
            }
        } catch let error as HomeError {
            throw error
        } catch {
            throw .storage("\(path): cannot save the device registry: \(error)")
        }
    }

    /// At the end of the window, writes what is queued; a failure goes to the next writer.
    func scheduleDriverRowFlush() {
        let nanoseconds = Int(driverRowWindow / .nanoseconds(1))
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
            guard let self else { return }
            self.driverRows.withLock { $0.windowEnded() }
            do throws(HomeError) {
                try self.flushDriverRows()
            } catch {
                self.driverRows.withLock { $0.failure = error }
            }
        }
    }

    // MARK: - Registry

    /// Every device in the registry (commissioned and discovered), by ID.
    public func registry() throws(HomeError) -> [RegistryEntry] {
        try flushDriverRows()
        let path = self.path
        return try read { db in try Row.fetchAll(db, sql: "SELECT * FROM device ORDER BY id").map { try Self.entry($0, path: path) } }
    }

    /// One device's registry entry, or nil.
    public func registryEntry(_ id: DeviceID) throws(HomeError) -> RegistryEntry? {
        try flushDriverRows()
        let path = self.path
        return try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM device WHERE id = ?", arguments: [id.rawValue]).map { try Self.entry($0, path: path) }
        }
    }

    /// Sets (or, with nil, clears) what an output does when Hearth starts.
    ///
    /// Takes effect at the next start (``OutputRestorer``).
    /// - Throws: `notFound` for an unknown device; `invalidArgument` for a device without an
    ///   On/Off trait (a sensor has nothing to restore).
    public func setRestoreOnStart(_ policy: RestoreOnStart?, for id: DeviceID) throws(HomeError) {
        guard let entry = try registryEntry(id) else { throw .notFound("no device \(id) in \(path)") }
        guard entry.device.onOffDeviceType != nil else {
            throw .invalidArgument("\(entry.device.name) (\(id)) is not an output: it has no On/Off trait to restore")
        }
        try write { db in
            try db.execute(sql: "UPDATE device SET restoreOnStart = ? WHERE id = ?", arguments: [policy?.rawValue, id.rawValue])
        }
    }

    /// The On/Off state each commissioned output with a restore setting should get at start-up
    /// (`last` without a saved state is left alone).
    public func restorePlan() throws(HomeError) -> [DeviceID: Bool] {
        var plan: [DeviceID: Bool] = [:]
        for e in try registry() where e.device.commissioning == .commissioned {
            switch e.restoreOnStart {
            case .on: plan[e.device.id] = true
            case .off: plan[e.device.id] = false
            case .last: if let last = e.lastOnOff { plan[e.device.id] = last }
            case nil: break
            }
        }
        return plan
    }

    /// Records when devices were last seen (the core's `lastSeen`), e.g. at shutdown; never
    /// moves a time backwards. Cheap to call rarely; not meant for every report.
    public func recordSeen(_ seen: some Collection<(key: DeviceID, value: UInt64)> & Sendable) throws(HomeError) {
        guard !seen.isEmpty else { return }
        try flushDriverRows()
        let seen = Array(seen)
        try write { db in
            for (id, at) in seen {
                try db.execute(
                    sql: "UPDATE device SET lastSeen = MAX(lastSeen, ?) WHERE id = ?", arguments: [Int64(clamping: at), id.rawValue])
            }
        }
    }
}
