// The automation engine's starter evaluation (issue 18). Prints figures; asserts nothing.
//
//     swift run -c release automation-benchmark [reports, default 200000]
//
// A core with 100 thermometers; 0, 100 and 1,000 automations, each with an attribute starter
// (`above` with hysteresis) on one of them — so every report is looked at by 0, 1 or 10
// starters — plus, in the last run, 10 % of the automations firing (a `log` action) on every
// crossing. Reports go through the core's normal path and the lossless tap; the figure is
// reports/s processed end to end and starter evaluations/s (reports × starters watching).
// Results and the machine are recorded in docs/BENCHMARKS.md.
import DriverAPI
import Foundation
import HomeAutomation
import HomeCore
import HomeModel
import Logging

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
}

func measure(automations: Int, firingShare: Double) async -> Figures {
    let core = HomeCore()
    let driver = core.context(for: "bench")
    for i in 0..<sensors { driver.publish(thermometer(i)) }
    var quiet = Logger(label: "bench")
    quiet.logLevel = .critical
    let engine = AutomationEngine(core: core, logger: quiet)
    let admin = Principal(id: "user:bench", role: .admin)
    let firing = Int(Double(automations) * firingShare)
    for n in 0..<automations { _ = try! await engine.save(automation(n, firing: n < firing), as: admin) }
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
    service.cancel()
    _ = await service.value
    let watching = Double(automations) / Double(sensors)
    return Figures(reportsPerSecond: Double(reports) / seconds, evaluationsPerSecond: Double(reports) * watching / seconds, runs: runs)
}

say("automation-benchmark: \(reports) reports over \(sensors) thermometers, through the core and the lossless tap")
say("automations  firing  reports/s  starter evaluations/s  runs started")
for (count, share) in [(0, 0.0), (100, 0.0), (1000, 0.0), (1000, 0.1)] {
    let f = await measure(automations: count, firingShare: share)
    say(String(format: "%11d  %5.0f%%  %9.0f  %21.0f  %12d", count, share * 100, f.reportsPerSecond, f.evaluationsPerSecond, f.runs))
}
