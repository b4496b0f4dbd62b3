// The automation engine's starter evaluation (issue 18). Prints figures; asserts nothing.
//
//     swift run -c release automation-benchmark [reports, default 200000]
//
// A core with 100 thermometers; 0, 100 and 1,000 automations, each with an attribute starter
// (`above` with hysteresis) on one of them — so every report is looked at by 0, 1 or 10
// starters — plus, in the last run, 10 % of the automations firing (a `log` action) on every
// crossing. Reports go through the core's normal path and the lossless tap; the figure is
// reports/s the engine evaluated (a tight loop reports faster than 1,000 automations are
// evaluated: what the tap dropped is counted and printed, not counted as evaluated) and
// starter evaluations/s (evaluated reports × starters watching).
//
// Then the latency of one automation with 0, 100 and 1,000 others loaded: a button's
// InitialPress reported by a plugin → the core → the tap → the engine → the `On` command handed
// to the plugin's command handler (the engine overhead of the issue, in-process), p50/p99/max
// over sequential presses; and how long saving the automations one by one took.
//
// Then end to end with the real GPIO and MQTT plugins (EndToEnd.swift): a button edge on the
// simulated chip → the relay line, and an MQTT message → an MQTT command, with and without
// 1,000 MQTT reports/s in the background. PARTS=engine,latency,e2e picks parts; SAMPLES sets
// the end-to-end samples (default 300).
// Results and the machine are recorded in docs/BENCHMARKS.md.
import DriverAPI
import Foundation
import HomeAutomation
import HomeCore
import HomeModel
import Logging
import Synchronization

func say(_ line: String = "") { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let sensors = 100
let reports = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 200_000
let temperature = TemperatureMeasurementTrait.identifier
let measured = TemperatureMeasurementTrait.Attribute.measuredValue

func thermometer(_ i: Int) -> DeviceDescription {
    DeviceDescription(
        localID: "t\(i)", name: "Thermometer \(i)",
        types: [
            DeviceTypeDescription(
                id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                traits: [IdentifyTrait.identifier: [:], temperature: [measured: .int(2000)]])
        ], commission: CommissionHint(name: "Thermometer \(i)", room: "Room \(i % 10)"))
}

/// `above` a threshold no report reaches (32000, near the top of the range) (pure evaluation), or one that every other report
/// crosses (the starter fires and a run with a `log` step starts).
func automation(_ n: Int, firing: Bool) -> Automation {
    let above = firing ? 2050 : 32_000
    let json = """
        {"id": "a\(n)", "name": "Automation \(n)",
         "starters": [{"attribute": {"device": "bench:t\(n % sensors)", "trait": "TemperatureMeasurement", "attribute": "MeasuredValue",
                                     "above": \(above), "hysteresis": 10}}],
         "actions": [{"log": "crossed"}]}
        """
    return try! JSONDecoder().decode(Automation.self, from: Data(json.utf8))
}

struct Figures {
    let reportsPerSecond: Double
    let evaluationsPerSecond: Double
    let runs: Int
    let saveSeconds: Double
    let dropped: UInt64
}

func measure(automations: Int, firingShare: Double) async -> Figures {
    let core = HomeCore()
    let driver = core.context(for: "bench")
    for i in 0..<sensors { driver.publish(thermometer(i)) }
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    // The firing automations start on every other report of their thermometer: far past the
    // loop guard's 20 starts in 10 s, which would suspend them after their first 21 runs.
    let engine = AutomationEngine(core: core, logger: quiet, loopGuard: .init(starts: reports + 1, seconds: 10))
    let admin = Principal(id: "user:bench", role: .admin)
    let firing = Int(Double(automations) * firingShare)
    let saving = ContinuousClock.now
    for n in 0..<automations { _ = try! await engine.save(automation(n, firing: n < firing), as: admin) }
    let saved = ContinuousClock.now - saving
    // The tap is installed before measuring (run() would do it too, later).
    await engine.start()
    let service = Task { await engine.run() }
    let clock = ContinuousClock()
    let start = clock.now
    for r in 0..<reports {
        let i = r % sensors
        // Alternates 2000 / 2100 per sensor: every report is a change, every other one a crossing.
        let value: Int64 = (r / sensors) % 2 == 0 ? 2100 : 2000
        driver.report([AttributeReport(localID: "t\(i)", trait: temperature, attribute: measured, value: .int(value))])
    }
    await engine.waitForVersion(core.state.version)
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    var runs = 0
    for n in 0..<firing { runs += (try? await engine.record("a\(n)", as: admin).executionCount) ?? 0 }
    let dropped = await engine.droppedChanges
    service.cancel()
    _ = await service.value
    let watching = Double(automations) / Double(sensors)
    return Figures(
        // What the engine looked at: a change the tap dropped (the engine fell 10,000 behind the
        // reporting loop) was not evaluated, so it does not count.
        reportsPerSecond: Double(reports - Int(dropped)) / seconds, evaluationsPerSecond: Double(reports - Int(dropped)) * watching / seconds, runs: runs,
        saveSeconds: saved.seconds, dropped: dropped)
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// The relay's command handler: notes when each command arrives and wakes the waiting press.
final class Relay: CommandHandler {
    struct State {
        var waiter: CheckedContinuation<ContinuousClock.Instant?, Never>?
        var early: ContinuousClock.Instant?
        var generation = 0
    }
    let state = Mutex(State())

    func handle(_ command: DriverCommand) async throws -> Value {
        let now = ContinuousClock.now
        let waiter = state.withLock { s -> CheckedContinuation<ContinuousClock.Instant?, Never>? in
            guard let w = s.waiter else {
                s.early = now
                return nil
            }
            s.waiter = nil
            return w
        }
        waiter?.resume(returning: now)
        return .null
    }

    func write(_ write: DriverWrite) async throws {}

    /// The instant the next command arrived, or nil when none came within `limit`.
    func next(within limit: Duration = .seconds(10)) async -> ContinuousClock.Instant? {
        await withCheckedContinuation { c in
            let (early, generation) = state.withLock { s -> (ContinuousClock.Instant?, Int) in
                s.generation += 1
                if let e = s.early {
                    s.early = nil
                    return (e, s.generation)
                }
                s.waiter = c
                return (nil, s.generation)
            }
            if let early {
                c.resume(returning: early)
                return
            }
            Task {
                try? await Task.sleep(for: limit)
                let late = self.state.withLock { s -> CheckedContinuation<ContinuousClock.Instant?, Never>? in
                    guard s.generation == generation else { return nil }  // that wait ended; a newer one is not ours
                    defer { s.waiter = nil }
                    return s.waiter
                }
                late?.resume(returning: nil)
            }
        }
    }
}

struct Latency {
    let p50: Double
    let p99: Double
    let max: Double
    let saveSeconds: Double
}

/// Button press → `On` handed to the relay's handler, with `others` automations loaded (each an
/// attribute starter on a thermometer, as above).
func latency(others: Int, presses: Int) async -> Latency {
    let core = HomeCore()
    let bench = core.context(for: "bench")
    for i in 0..<sensors { bench.publish(thermometer(i)) }
    let io = core.context(for: "io")
    let relay = Relay()
    core.setCommandHandler(relay, for: "io")
    io.publish(
        DeviceDescription(
            localID: "button", name: "Button",
            types: [
                DeviceTypeDescription(
                    id: GenericSwitchDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], SwitchTrait.identifier: [SwitchTrait.Attribute.numberOfPositions: 2, SwitchTrait.Attribute.currentPosition: 0]])
            ], commission: CommissionHint(name: "Button", room: "Hall")))
    io.publish(
        DeviceDescription(
            localID: "relay", name: "Relay",
            types: [
                DeviceTypeDescription(
                    id: OnOffPlugInUnitDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: false]])
            ], commission: CommissionHint(name: "Relay", room: "Hall")))
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    // Presses come back to back: the loop guard (20 starts in 10 s in hearthd) would suspend the probe.
    let engine = AutomationEngine(core: core, logger: quiet, loopGuard: .init(starts: presses + 1, seconds: 10))
    let admin = Principal(id: "user:bench", role: .admin)
    let saving = ContinuousClock.now
    for n in 0..<others { _ = try! await engine.save(automation(n, firing: false), as: admin) }
    let saved = ContinuousClock.now - saving
    let probe = """
        {"id": "press", "name": "Press", "mode": "parallel",
         "starters": [{"event": {"device": "io:button", "trait": "Switch", "event": "InitialPress"}}],
         "actions": [{"command": {"device": "io:relay", "trait": "OnOff", "command": "On"}}]}
        """
    _ = try! await engine.save(try! JSONDecoder().decode(Automation.self, from: Data(probe.utf8)), as: admin)
    await engine.start()
    let service = Task { await engine.run() }
    var samples: [Double] = []
    samples.reserveCapacity(presses)
    for i in 0..<presses {
        let pressed = ContinuousClock.now
        io.emit(EventReport(localID: "button", trait: SwitchTrait.identifier, event: SwitchTrait.Event.initialPress, fields: ["NewPosition": 1]))
        guard let arrived = await relay.next() else {
            // Bounded: say why the command never came (the press automation's newest trace) and stop.
            let trace = (try? await engine.runs("press", as: admin).first).map { String(describing: $0) } ?? "no run"
            say("press \(i): no command reached the relay within 10 s; newest run of 'press': \(trace)")
            exit(1)
        }
        if i >= presses / 10 { samples.append((arrived - pressed).seconds * 1e6) }  // the first 10 % warm up
        // Background traffic between presses: one report per press, seen by the other automations.
        bench.report([AttributeReport(localID: "t\(i % sensors)", trait: temperature, attribute: measured, value: .int(Int64(2000 + i % 2)))])
    }
    service.cancel()
    _ = await service.value
    samples.sort()
    func at(_ q: Double) -> Double { samples[min(samples.count - 1, Int(Double(samples.count) * q))] }
    return Latency(p50: at(0.5), p99: at(0.99), max: samples.last ?? 0, saveSeconds: saved.seconds)
}

let parts = ProcessInfo.processInfo.environment["PARTS"] ?? "engine,latency,e2e"
if parts.contains("engine") {
say("automation-benchmark: \(reports) reports over \(sensors) thermometers, through the core and the lossless tap")
say("automations  firing  evaluated reports/s  starter evaluations/s  runs started  saved one by one in  changes the tap dropped")
for (count, share) in [(0, 0.0), (100, 0.0), (1000, 0.0), (1000, 0.1)] {
    let f = await measure(automations: count, firingShare: share)
    say(String(format: "%11d  %5.0f%%  %19.0f  %21.0f  %12d  %17.3f s  %22llu", count, share * 100, f.reportsPerSecond, f.evaluationsPerSecond, f.runs, f.saveSeconds, f.dropped))
}
}
let presses = max(1000, reports / 100)
if parts.contains("latency") {
say()
say("button InitialPress → automation → On handed to the relay's handler, \(presses) presses (first 10 % warm-up)")
say("other automations  p50 µs  p99 µs  max µs  saved one by one in")
for others in [0, 100, 1000] {
    let l = await latency(others: others, presses: presses)
    say(String(format: "%17d  %6.0f  %6.0f  %6.0f  %8.3f s", others, l.p50, l.p99, l.max, l.saveSeconds))
}
}
if parts.contains("e2e") { await runEndToEnd(samples: Int(ProcessInfo.processInfo.environment["SAMPLES"] ?? "") ?? 300) }
