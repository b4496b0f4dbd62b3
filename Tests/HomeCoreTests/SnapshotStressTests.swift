import DriverAPI
import Foundation
import HomeCore
import HomeModel
import HashTreeCollections
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Reports and discovery churn land while other threads take, hold, iterate and drop snapshots
/// of the same persistent trees (as subscribers do). The debug build used to trip an assertion
/// in the tree's in-place edit (`HomeState.report`) that read a node a dropped snapshot had freed.
@Suite struct SnapshotStressTests {
    /// What a reader saw that it must not: a snapshot that changed while held, or the two
    /// trees of one version disagreeing.
    final class Findings: Sendable {
        let problems = Mutex<[String]>([])
        let snapshotsChecked = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)

        func record(_ problem: String) { problems.withLock { if $0.count < 10 { $0.append(problem) } } }
    }

    /// glibc's `mallopt(M_PERTURB, byte)` (malloc.h is not in Swift's Glibc module): fills
    /// freed blocks with `byte`, and fresh ones with its complement; 0 turns it off.
    static func perturbFreedMemory(_ byte: Int32) {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mPerturb: Int32 = -6
        guard let symbol = dlsym(nil, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mPerturb, byte)
    }

    static func onCount(_ state: HomeState) -> Int {
        var n = 0
        for (_, d) in state.devices where d.types.first?.traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff] == true { n += 1 }
        return n
    }

    /// Takes snapshots, keeps a few alive across the writer's edits (dropping the oldest at an
    /// arbitrary moment), and checks each one is consistent and does not change while held.
    static func read(_ core: HomeCore, _ findings: Findings) {
        var held: [(HomeState, on: Int)] = []
        var turn = 0
        while !findings.stop.load(ordering: .relaxed) {
            let s = core.state
            let on = onCount(s)
            // What a `discoveredDevices()` subscription builds: subtrees shared with the writer's.
            let discovered = s.devices.filter { $0.value.commissioning == .discovered }
            if discovered.count + s.commissioned.count != s.devices.count {
                findings.record("version \(s.version): \(discovered.count) discovered + \(s.commissioned.count) commissioned != \(s.devices.count)")
            }
            for (id, d) in s.commissioned where s.devices[id] != d {
                findings.record("version \(s.version): \(id) differs between devices and commissioned")
            }
            held.append((s, on))
            if held.count > 3 + turn % 3 {
                let (old, onBefore) = held.removeFirst()
                let onNow = onCount(old)
                if onNow != onBefore { findings.record("version \(old.version) changed while held: \(onBefore) on, now \(onNow)") }
            }
            turn += 1
            findings.snapshotsChecked.add(1, ordering: .relaxed)
        }
    }

    /// Runs blocking work on a new thread and awaits its result without holding a pool thread.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func reportsAndChurn_whileOtherThreadsHoldAndDropSnapshots() async throws {
        // Freed memory is overwritten at once, so a read of a freed node fails loudly instead
        // of finding the old bytes still there. Only freed and fresh blocks are affected.
        Self.perturbFreedMemory(0x5A)
        defer { Self.perturbFreedMemory(0) }

        let core = HomeCore()
        let driver = core.context(for: "p")
        let count = 300  // enough for a tree of several levels
        for i in 0..<count {
            driver.publish(Fixtures.lamp("lamp\(i)", name: "Lamp \(i)", commission: i % 2 == 0 ? CommissionHint(name: "Lamp \(i)") : nil))
        }
        let findings = Findings()
        let readers = 3
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<readers {
            Thread {
                Self.read(core, findings)
                done.signal()
            }.start()
        }
        // A subscriber as the API has them: holds each whole set it is handed, and walks it.
        let home = core.home(for: .system)
        let subscriber = Task {
            var names = 0
            for await set in home.discoveredDevices().batched() { names += set.reduce(0) { $0 + $1.name.count } }
            return names
        }

        // The writer and the joins run on a thread of their own: blocking the test's pool
        // thread would starve every other test running beside this one.
        let expected = await Self.onThread { () -> [Int: Bool] in
            var expected: [Int: Bool] = [:]
            let deadline = ContinuousClock.now + .seconds(5)
            var k = 0
            while k < 40_000 && ContinuousClock.now < deadline {
                let i = (k &* 7) % count
                let on = (k / count) % 2 == 0
                driver.report("lamp\(i)", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on))
                expected[i] = on
                if k % 16 == 0 {
                    // Discovery churn: a device appears, an older one goes.
                    driver.publish(Fixtures.lamp("churn\(k)"))
                    if k >= 64 { driver.remove(device: "churn\(k - 64)") }
                }
                k += 1
            }
            findings.stop.store(true, ordering: .relaxed)
            for _ in 0..<readers { done.wait() }
            return expected
        }
        subscriber.cancel()
        _ = await subscriber.value

        #expect(findings.problems.withLock { $0 } == [])
        #expect(findings.snapshotsChecked.load(ordering: .relaxed) > 0)
        let state = core.state
        for (i, on) in expected {
            let value = state.devices[DeviceID(plugin: "p", local: "lamp\(i)")]?.types.first?.traits[OnOffTrait.identifier]?[OnOffTrait.Attribute.onOff]
            #expect(value == .bool(on), "lamp\(i)")
        }
        for i in stride(from: 0, to: count, by: 2) {
            let id = DeviceID(plugin: "p", local: "lamp\(i)")
            #expect(state.commissioned[id] == state.devices[id])
        }
        #expect(state.devices.count == count + 4)  // the last four churn devices
    }
}
