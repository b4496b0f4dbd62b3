import DriverAPI
import Foundation
import GRDB
import HomeCore
import HomeModel
@testable import HomeStorage
import Synchronization
import Testing

/// The device registry: stable IDs, first/last seen, last known connectivity, and the last
/// On/Off state of outputs saved on change only (never on sensor reports).
@Suite struct RegistryTests {
    static let relay = DeviceID(plugin: "gpio", local: "relay")
    static let door = DeviceID(plugin: "gpio", local: "door")

    /// How many rows SQLite changed in the file so far (by reading the layout version).
    static func layoutVersion(_ db: HearthDatabase) throws -> String? {
        try db.pool.read { try String.fetchOne($0, sql: "SELECT value FROM meta WHERE key = 'layoutVersion'") }
    }

    @Test func firstAndLastSeen_followTheCoresClock() throws {
        let dir = TempDir()
        let clock = Harness.Clock()
        let h = try Harness(path: dir.path("hearth.sqlite"), clock: clock)
        h.context().publish(Harness.relay())
        let first = try #require(try h.db.registryEntry(Self.relay))
        #expect(first.firstSeen == 1_000)
        #expect(first.lastSeen == 1_000)
        #expect(first.connectivity == .online)
        #expect(first.device.id.rawValue == "gpio:relay")

        clock.advance(60_000)
        h.context().report("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))
        let later = try #require(try h.db.registryEntry(Self.relay))
        #expect(later.firstSeen == 1_000)
        #expect(later.lastSeen == 61_000)

        // The core's in-memory last-seen (moved by every report) is saved when asked.
        clock.advance(1_000)
        h.context().report("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))
        try h.db.recordSeen(h.core.lastSeen)
        #expect(try h.db.registryEntry(Self.relay)?.lastSeen == 62_000)
        // Never backwards.
        try h.db.recordSeen([Self.relay: 5])
        #expect(try h.db.registryEntry(Self.relay)?.lastSeen == 62_000)
    }

    @Test func outputState_isSavedOnChange_sensorReportsAreNotWritten() throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        h.context().publish(Harness.relay(on: false))
        h.context().publish(Harness.door())
        #expect(try h.db.registryEntry(Self.relay)?.lastOnOff == false)
        let before = try Self.layoutVersion(h.db)

        for open in [false, true, false, true] {
            h.context().report("door", BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(open))
        }
        #expect(try Self.layoutVersion(h.db) == before, "a sensor report must not write to the database")
        #expect(try h.db.registryEntry(Self.door)?.lastOnOff == nil)

        h.context().report("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))
        #expect(try h.db.registryEntry(Self.relay)?.lastOnOff == true)
        let afterOn = try Self.layoutVersion(h.db)
        #expect(afterOn != before)
        // The same value again is no change: no write.
        h.context().report("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))
        #expect(try Self.layoutVersion(h.db) == afterOn)
    }

    @Test func anOlderOutputState_neverOverwritesANewerOne() throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        h.context().publish(Harness.relay(on: false))
        let version = h.core.state.version
        // Two plugin threads raced: the newer step (on) was written first.
        try h.db.persist(LayoutDelta(version: version + 2, outputStates: [Self.relay: true]))
        try h.db.persist(LayoutDelta(version: version + 1, outputStates: [Self.relay: false]))
        #expect(try h.db.registryEntry(Self.relay)?.lastOnOff == true)
        try h.db.persist(LayoutDelta(version: version + 3, outputStates: [Self.relay: false]))
        #expect(try h.db.registryEntry(Self.relay)?.lastOnOff == false)
    }

    @Test func restoreOnStart_plan_followsTheSetting_andTheLastState() throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let ctx = h.context()
        ctx.publish(Harness.relay("a", on: true))
        ctx.publish(Harness.relay("b", on: true))
        ctx.publish(Harness.relay("c", on: false))
        ctx.publish(Harness.relay("d", on: true))
        ctx.report("c", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))
        let a = DeviceID(plugin: "gpio", local: "a")
        let b = DeviceID(plugin: "gpio", local: "b")
        let c = DeviceID(plugin: "gpio", local: "c")
        try h.db.setRestoreOnStart(.off, for: a)
        try h.db.setRestoreOnStart(.on, for: b)
        try h.db.setRestoreOnStart(.last, for: c)
        // d has no setting: left as the hardware starts.
        let home = try h.home.createStructure(named: "Home")
        for (id, name) in [(a, "A"), (b, "B"), (c, "C"), (DeviceID(plugin: "gpio", local: "d"), "D")] {
            try h.home.commission(id, name: name, structure: home)
        }

        let r = try h.restarted()
        #expect(try r.db.restorePlan() == [a: false, b: true, c: true])
        #expect(try r.db.registryEntry(c)?.restoreOnStart == .last)
        try r.db.setRestoreOnStart(nil, for: b)
        #expect(try r.db.restorePlan() == [a: false, c: true])
    }

    @Test func restoreOnStart_isRefusedForSensors_andUnknownDevices() throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        h.context().publish(Harness.door())
        let sensor = #expect(throws: HomeError.self) { try h.db.setRestoreOnStart(.on, for: Self.door) }
        #expect(sensor?.code == .invalidArgument)
        #expect(sensor?.message.contains("not an output") == true)
        let unknown = #expect(throws: HomeError.self) { try h.db.setRestoreOnStart(.on, for: "gpio:nothing") }
        #expect(unknown?.code == .notFound)
    }

    @Test func outputRestorer_sendsOnlyWhatDiffers_whenTheDeviceComesOnline() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        h.context().publish(Harness.relay("a", on: false))
        h.context().publish(Harness.relay("b", on: true))
        let a = DeviceID(plugin: "gpio", local: "a")
        let b = DeviceID(plugin: "gpio", local: "b")
        let home = try h.home.createStructure(named: "Home")
        try h.home.commission(a, name: "Pump", structure: home)
        try h.home.commission(b, name: "Fan", structure: home)
        try h.db.setRestoreOnStart(.on, for: a)
        try h.db.setRestoreOnStart(.on, for: b)

        let r = try h.restarted()
        let commands = CommandLog()
        r.core.setCommandHandler(commands, for: "gpio")
        let restorer = OutputRestorer(core: r.core, plan: try r.db.restorePlan())
        let running = Task { await restorer.run() }
        // The plugin starts after the restart: a is off, b is already on.
        r.context().publish(Harness.relay("a", on: false))
        r.context().publish(Harness.relay("b", on: true))
        let outcomes = await running.value
        #expect(Set(outcomes) == [
            OutputRestorer.Outcome(device: a, sent: true, error: nil),
            OutputRestorer.Outcome(device: b, sent: nil, error: nil),
        ])
        #expect(commands.sent == [DriverCommand(localID: "a", deviceType: OnOffPlugInUnitDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on, origin: "system")])
    }
}

/// A command handler that records what it was sent.
final class CommandLog: CommandHandler, Sendable {
    let log = Mutex<[DriverCommand]>([])
    var sent: [DriverCommand] { log.withLock { $0 } }
    func handle(_ command: DriverCommand) async throws -> Value {
        log.withLock { $0.append(command) }
        return .null
    }
    func write(_ write: DriverWrite) async throws {}
}

/// Which commits wait for the disk (issue 22): a driver's registry rows are committed with
/// `synchronous = NORMAL` (no fsync of their own), everything a person did or an output's state
/// with `FULL`, and the writer is back at `FULL` after each.
@Suite struct RegistryDurabilityTests {
    /// Statements a connection ran, collected by its trace.
    final class Statements: Sendable {
        let list = Mutex<[String]>([])
        /// What was collected since the last take.
        func take() -> [String] { list.withLock { s in defer { s.removeAll() }; return s } }
    }

    /// The statements the writer connection runs from now on.
    static func traceWriter(_ db: HearthDatabase) throws -> Statements {
        let seen = Statements()
        db.pool.writeWithoutTransaction { conn in
            conn.trace { event in
                if case .statement(let s) = event { seen.list.withLock { $0.append(s.sql) } }
            }
        }
        return seen
    }

    static func synchronous(_ db: HearthDatabase) throws -> Int? {
        try db.pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
    }

    @Test func driverRowsSkipTheirOwnFsync_layoutAndOutputsStayDurable() throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let seen = try Self.traceWriter(h.db)

        // A discovered sensor: a driver's registry row, saved without waiting for the disk.
        h.context().publish(Harness.door())
        #expect(try h.db.registryEntry(RegistryTests.door) != nil)
        var statements = seen.take()
        #expect(statements.contains("PRAGMA synchronous = NORMAL"))
        #expect(statements.last == "PRAGMA synchronous = FULL")
        #expect(try Self.synchronous(h.db) == 2)

        // An output's state is kept durably, even when a driver reported it.
        h.context().publish(Harness.relay(on: false))
        h.context().report("relay", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))
        statements = seen.take()
        #expect(try h.db.registryEntry(RegistryTests.relay)?.lastOnOff == true)
        #expect(statements.filter { $0 == "PRAGMA synchronous = NORMAL" }.count == 0,
                "the relay's publish carries its On/Off state: a durable commit")

        // A person's edit (renaming a device) is durable.
        try h.home.edit(.renameDevice(RegistryTests.door, name: "Front door"))
        statements = seen.take()
        #expect(!statements.contains("PRAGMA synchronous = NORMAL"))
        #expect(try h.db.registryEntry(RegistryTests.door)?.device.name == "Front door")

        // After a restart everything is there.
        let again = try h.restarted()
        #expect(try again.home.currentDevice(id: RegistryTests.door).name == "Front door")
        #expect((try? again.home.currentDevice(id: RegistryTests.relay)) != nil)
    }
}
