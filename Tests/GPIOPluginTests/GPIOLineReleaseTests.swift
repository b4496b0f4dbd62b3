import DriverAPI
import DriverTesting
import Foundation
import GPIOKit
import HomeModel
import Synchronization
import Testing

/// A line another process releases is taken promptly — also when the release is noticed while
/// the plugin's own request is failing, and when the line is still busy for a moment after the
/// release — not at the next `retry` (ten minutes here). On the manual clock, with the kernel's
/// line-info watch played by ``ReleasingBackend``.
@Suite struct GPIOLineReleaseTests {
    let clock = ManualClock()
    let hardware = GPIOSimulator()

    func start(_ backend: ReleasingBackend) throws -> (TestHost, Task<Void, any Error>) {
        hardware.addChip("gpiochip7", lineNames: ["GPIO0", "GPIO1"])
        hardware.hold(chip: "gpiochip7", line: "1", consumer: "gpiomon")
        let host = TestHost(
            pluginID: "gpio",
            configuration: ["lines": [["id": "pump", "chip": "gpiochip7", "line": 1, "role": "relay"]], "retry": "600s"])
        return (host, try host.start(GPIODriverPlugin(clock: clock, simulator: GPIOSimulator(), hardware: backend)))
    }

    /// Waits until `condition` holds, looking every millisecond; fails after 5 s of real time
    /// (what the plugin does next happens on its own task: this only waits for it).
    func until(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<5000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(1))
        }
        try #require(condition(), "never happened: \(what)")
    }

    /// Waits until the plugin made its `n`th request and sleeps on the clock again. (A sleep it
    /// began before that request was cancelled before the request: the one seen is the next.)
    func untilAttempt(_ n: Int, _ backend: ReleasingBackend) async throws {
        try await until("request \(n), then asleep (requests so far: \(backend.attempts))") { backend.attempts >= n && clock.sleeperCount > 0 }
        #expect(backend.attempts == n)
    }

    @Test func aReleasedLine_stillBusyForAMoment_isTakenAfterAShortBackoff_notAtTheNextRetry() async throws {
        let backend = ReleasingBackend(simulator: hardware)
        let (host, task) = try start(backend)
        defer { task.cancel() }
        try await untilAttempt(1, backend)
        #expect(host.connectivity(of: "pump") == .offline)
        #expect(host.logLines.contains { $0.contains("held by 'gpiomon'") }, "\(host.logLines)")
        // gpiomon lets go; the kernel tells the watcher, but the next two requests still find
        // the line busy (the releasing side has not finished, or took it back for a moment).
        hardware.unhold(chip: "gpiochip7", line: "1")
        backend.refuse(offset: 1, times: 2)
        backend.announce(GPIOLineChange(offset: 1, kind: .released, consumer: "", timestampNanoseconds: 0))
        #expect(host.logLines.contains { $0.contains("line 1 of GPIO chip gpiochip7 was released by 'gpiomon'; requesting it for 'pump' now") })
        try await untilAttempt(2, backend)  // at once: refused
        clock.advance(by: .milliseconds(20))
        try await untilAttempt(3, backend)  // 20 ms later: refused
        clock.advance(by: .milliseconds(50))
        try await until("the pump online 70 ms after the release") { host.connectivity(of: "pump") == .online }
        #expect(backend.attempts == 4)
        #expect(backend.refusals == 2)
        #expect(hardware.consumer(chip: "gpiochip7", line: "1") == "hearth:pump")
        await stop(task)
    }

    @Test func aLineReleasedWhileTheRequestForItFails_isRequestedAgainAtOnce() async throws {
        let backend = ReleasingBackend(simulator: hardware)
        // The release reaches the watcher between the kernel's EBUSY and the plugin recording
        // the failure (the scheduler thread preempted there under load).
        backend.onBusy { [hardware] in
            hardware.unhold(chip: "gpiochip7", line: "1")
            backend.announce(GPIOLineChange(offset: 1, kind: .released, consumer: "", timestampNanoseconds: 0))
        }
        let (host, task) = try start(backend)
        defer { task.cancel() }
        // No time passes on the clock: the second request comes at once.
        try await until("the pump online without the clock moving") { host.connectivity(of: "pump") == .online }
        #expect(backend.attempts == 2)
        #expect(host.logLines.contains { $0.contains("was released by 'gpiomon'; requesting it for 'pump' now") }, "\(host.logLines)")
        #expect(hardware.consumer(chip: "gpiochip7", line: "1") == "hearth:pump")
        await stop(task)
    }

    @Test func aLineThatStaysBusyAfterItsRelease_fallsBackToTheRetryInterval_afterAFewQuickAttempts() async throws {
        let backend = ReleasingBackend(simulator: hardware)
        let (host, task) = try start(backend)
        defer { task.cancel() }
        try await untilAttempt(1, backend)
        // A release is announced, but another process took the line straight back.
        backend.announce(GPIOLineChange(offset: 1, kind: .released, consumer: "", timestampNanoseconds: 0))
        try await untilAttempt(2, backend)
        var attempts = 2
        for step in [20, 50, 100, 200, 500, 1000] {
            clock.advance(by: .milliseconds(step - 1))
            try await Task.sleep(for: .milliseconds(20))
            #expect(backend.attempts == attempts, "no request before the \(step) ms step is over")
            clock.advance(by: .milliseconds(1))
            attempts += 1
            try await untilAttempt(attempts, backend)
        }
        // Then the ten-minute retry.
        clock.advance(by: .seconds(599))
        try await Task.sleep(for: .milliseconds(20))
        #expect(backend.attempts == attempts, "back to every `retry`")
        #expect(host.connectivity(of: "pump") == .offline)
        hardware.unhold(chip: "gpiochip7", line: "1")
        clock.advance(by: .seconds(1))
        try await until("the pump online at the ten-minute retry") { host.connectivity(of: "pump") == .online }
        #expect(backend.attempts == attempts + 1)
        await stop(task)
    }

    func stop(_ task: Task<Void, any Error>) async {
        task.cancel()
        _ = await task.result
    }
}

/// Simulated chips that play the kernel's line-info watch: the test announces releases to
/// the plugin's watcher, can have requests refused as busy a few more times (a release whose
/// line is not free yet), and can run something the moment a request is refused as busy.
final class ReleasingBackend: GPIOChipBackend {
    struct State {
        var watchers: [@Sendable (GPIOLineChange) -> Void] = []
        var refuse: [Int: Int] = [:]
        var refusals = 0
        var attempts = 0
        var onBusy: (@Sendable () -> Void)?
    }

    let inner: SimulatedGPIOBackend
    let state = Mutex(State())

    init(simulator: GPIOSimulator) { inner = SimulatedGPIOBackend(simulator: simulator) }

    var refusals: Int { state.withLock { $0.refusals } }
    var attempts: Int { state.withLock { $0.attempts } }

    func refuse(offset: Int, times: Int) { state.withLock { $0.refuse[offset] = times } }

    /// Runs `body` (once) when a request is next refused as busy, before the plugin hears of it.
    func onBusy(_ body: @escaping @Sendable () -> Void) { state.withLock { $0.onBusy = body } }

    /// Tells the plugin's watchers what the kernel would.
    func announce(_ change: GPIOLineChange) {
        for watcher in state.withLock({ $0.watchers }) { watcher(change) }
    }

    func openChip(_ spec: String) throws(GPIOError) -> any GPIOChip { Chip(inner: try inner.openChip(spec), backend: self) }
    func monitor() async throws { try await inner.monitor() }

    /// Counts an attempt; throws busy when the test asked for a refusal.
    func attempt(_ offset: Int, _ chip: String, _ request: () throws(GPIOError) -> Void) throws(GPIOError) {
        let refused = state.withLock { s -> Bool in
            s.attempts += 1
            guard let n = s.refuse[offset], n > 0 else { return false }
            s.refuse[offset] = n - 1
            s.refusals += 1
            return true
        }
        do throws(GPIOError) {
            if refused { throw GPIOError(.busy, "line \(offset) of GPIO chip \(chip) is busy: held by 'gpiomon'") }
            try request()
        } catch {
            if error.code == .busy, let body = state.withLock({ s in defer { s.onBusy = nil }; return s.onBusy }) { body() }
            throw error
        }
    }

    final class Chip: GPIOChip {
        let inner: any GPIOChip
        let backend: ReleasingBackend

        init(inner: any GPIOChip, backend: ReleasingBackend) {
            self.inner = inner
            self.backend = backend
        }

        var name: String { inner.name }
        var label: String { inner.label }
        var lineCount: Int { inner.lineCount }
        var backendDescription: String { "simulated, with a line-info watch" }
        func offset(ofLineNamed name: String) -> Int? { inner.offset(ofLineNamed: name) }
        func consumer(ofLine offset: Int) -> String? { inner.consumer(ofLine: offset) }
        func close() { inner.close() }
        var isPresent: Bool { inner.isPresent }

        func watchLine(_ offset: Int, onChange: @escaping @Sendable (GPIOLineChange) -> Void) -> Bool {
            backend.state.withLock { $0.watchers.append(onChange) }
            return true
        }

        func requestInput(
            offset: Int, consumer: String, settings: GPIOInputSettings, onEdge: @escaping @Sendable (GPIOEdge) -> Void
        ) throws(GPIOError) -> any GPIOInputLine {
            var line: (any GPIOInputLine)?
            try backend.attempt(offset, name) { () throws(GPIOError) in
                line = try inner.requestInput(offset: offset, consumer: consumer, settings: settings, onEdge: onEdge)
            }
            return line!
        }

        func requestOutput(offset: Int, consumer: String, activeLow: Bool, initial: Bool) throws(GPIOError) -> any GPIOOutputLine {
            var line: (any GPIOOutputLine)?
            try backend.attempt(offset, name) { () throws(GPIOError) in
                line = try inner.requestOutput(offset: offset, consumer: consumer, activeLow: activeLow, initial: initial)
            }
            return line!
        }
    }
}
