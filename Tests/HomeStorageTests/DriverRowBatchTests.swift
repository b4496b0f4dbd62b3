import DriverAPI
import Foundation
import GRDB
import HomeCore
import HomeModel
@testable import HomeStorage
import Synchronization
import Testing

/// A driver's registry rows are queued and written together (issue 22): every read sees them,
/// nothing queued is lost when the database goes, and a plugin publishing 1,000 devices costs a
/// handful of transactions rather than 1,000.
@Suite struct DriverRowBatchTests {
    /// Counts the transactions committed on the database's writer.
    final class Commits: TransactionObserver, Sendable {
        let count = Mutex(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    /// A device as a plugin publishes it (the harness's door sensor, numbered).
    static func sensor(_ n: Int) -> DeviceDescription { Harness.door("t\(n)", name: "Door \(n)") }

    /// The rows in the file, read by a connection of its own (not through the queue).
    static func rowsOnDisk(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM device") ?? 0 }
    }

    static func pending(_ db: HearthDatabase) -> Int { db.driverRows.withLock { $0.pending.count } }

    /// The queue's state alone: one flush scheduled per window, a flush at once at the limit, and
    /// "settled" only when nothing waits and no taken batch is still being written.
    @Test func batchState_schedulesOncePerWindow_andFlushesAtTheLimit() {
        var batch = DriverRowBatch(limit: 3)
        var delta = LayoutDelta(version: 1)
        delta.fromDriver = true
        #expect(batch.isSettled)
        #expect(batch.add(delta) == .scheduleFlush)
        #expect(batch.add(delta) == .nothing)
        #expect(!batch.isSettled)
        #expect(batch.add(delta) == .flushNow)
        #expect(batch.take().count == 3)
        #expect(!batch.isSettled, "taken, not yet committed")
        batch.committed()
        #expect(batch.isSettled)
        #expect(batch.add(delta) == .nothing, "the window's flush is still to come")
        batch.windowEnded()
        #expect(batch.take().count == 1)
        batch.committed()
        #expect(batch.add(delta) == .scheduleFlush, "a new window")
    }

    @Test func queuedRows_areVisibleToEveryRead() throws {
        let dir = TempDir()
        // A window no test outlasts: only reads and writes flush here.
        let db = try HearthDatabase(path: dir.path("hearth.sqlite"), driverRowWindow: .seconds(600))
        let core = HomeCore(store: db)
        try core.restore()
        let context = core.context(for: "mqtt")

        context.publish(Self.sensor(1))
        #expect(Self.pending(db) == 1, "a published device is queued, not written at once")
        #expect(try db.registryEntry(DeviceID(plugin: "mqtt", local: "t1"))?.device.name == "Door 1")
        #expect(Self.pending(db) == 0)

        context.publish(Self.sensor(2))
        #expect(try db.registry().map(\.device.id.localID) == ["t1", "t2"])
        context.publish(Self.sensor(3))
        #expect(try db.exportLayout().devices.count == 3)
        context.publish(Self.sensor(4))
        #expect(try db.loadLayout().devices.count == 4)
        context.remove(device: "t4")
        #expect(Self.pending(db) == 1)
        #expect(try db.registryEntry(DeviceID(plugin: "mqtt", local: "t4")) == nil)

        // A layout edit is written at once, and the rows queued before it go first.
        context.publish(Self.sensor(5))
        _ = try core.home(for: .system).createStructure(named: "Home")
        #expect(Self.pending(db) == 0)
        #expect(try Self.rowsOnDisk(dir.path("hearth.sqlite")) == 4)
    }

    @Test func queuedRows_areWrittenOnFlush_andWhenTheDatabaseIsReleased() throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        var delta = LayoutDelta(
            upserted: [DeviceSnapshot(id: DeviceID(plugin: "mqtt", local: "a"), name: "A", types: [])], version: 1, at: 1_000)
        delta.fromDriver = true
        do {
            let db = try HearthDatabase(path: path, driverRowWindow: .seconds(600))
            try db.persist(delta)
            #expect(try Self.rowsOnDisk(path) == 0, "queued, not yet written")
            try db.flushDriverRows()
            #expect(try Self.rowsOnDisk(path) == 1)

            delta.upserted = [DeviceSnapshot(id: DeviceID(plugin: "mqtt", local: "b"), name: "B", types: [])]
            delta.version = 2
            try db.persist(delta)
            #expect(try Self.rowsOnDisk(path) == 1)
        }
        #expect(try Self.rowsOnDisk(path) == 2, "the released database wrote what was queued")
    }

    @Test func aWindowsRows_areWrittenWithoutAnyRead() async throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        let db = try HearthDatabase(path: path, driverRowWindow: .milliseconds(20))
        let core = HomeCore(store: db)
        try core.restore()
        core.context(for: "mqtt").publish(Self.sensor(1))
        // Polls the file (the window's flush runs on its own; no read of ours may flush it).
        let deadline = ContinuousClock.now + .seconds(30)
        while try Self.rowsOnDisk(path) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try Self.rowsOnDisk(path) == 1)
        withExtendedLifetime(db) {}
    }

    @Test func aThousandPublishes_areWrittenInAFewTransactions() throws {
        let dir = TempDir()
        let db = try HearthDatabase(path: dir.path("hearth.sqlite"))
        let core = HomeCore(store: db)
        try core.restore()
        let commits = Commits()
        db.pool.add(transactionObserver: commits)
        let context = core.context(for: "mqtt")
        for n in 0..<1_000 { context.publish(Self.sensor(n)) }
        #expect(try db.registry().count == 1_000)
        let written = commits.count.withLock { $0 }
        // 256 rows a transaction, plus what the 50 ms windows caught on a slow machine.
        #expect(written >= 1 && written <= 40, "\(written) transactions for 1,000 published devices")
    }
}
