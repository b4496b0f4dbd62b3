// Benchmark: what the SQLite store costs the core. Prints figures, asserts nothing.
//
//   swift build -c release --product hearth-storage-bench
//   .build/release/hearth-storage-bench [FOLDER]
//
// 1. sensor reports through a core with no store (baseline) and with the SQLite store:
//    the ratio shows that sensor reports cost no database write;
// 2. output On/Off changes (each one transaction, synchronous = FULL);
// 3. layout edits (rename a room: persisted before visible);
// 4. restart: opening the file and restoring N devices.
import DriverAPI
import Foundation
import HomeCore
import HomeModel
import HomeStorage

let folder = CommandLine.arguments.count > 1
    ? CommandLine.arguments[1] : FileManager.default.temporaryDirectory.appendingPathComponent("hearth-bench-\(getpid())").path
try? FileManager.default.removeItem(atPath: folder)

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

func sensor(_ i: Int) -> DeviceDescription {
    DeviceDescription(
        localID: "t\(i)", name: "Thermometer \(i)",
        types: [
            DeviceTypeDescription(
                id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                traits: [TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(2000)]])
        ])
}

func relay(_ i: Int) -> DeviceDescription {
    DeviceDescription(
        localID: "r\(i)", name: "Relay \(i)",
        types: [
            DeviceTypeDescription(
                id: OnOffPlugInUnitDeviceType.identifier, isPrimary: true,
                traits: [OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)]])
        ])
}

let reports = 20_000
func sensorRun(_ core: HomeCore) -> Double {
    let ctx = core.context(for: "bench")
    for i in 0..<10 { ctx.publish(sensor(i)) }
    return seconds {
        for n in 0..<reports {
            ctx.report("t\(n % 10)", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, .int(Int64(2000 + n % 500)))
        }
    }
}

let base = sensorRun(HomeCore())
let db = try HearthDatabase(path: folder + "/bench.sqlite")
let core = HomeCore(store: db)
let stored = sensorRun(core)
print("sensor reports (\(reports)), no store:     \(String(format: "%8.0f", Double(reports) / base)) reports/s")
print("sensor reports (\(reports)), SQLite store: \(String(format: "%8.0f", Double(reports) / stored)) reports/s  (ratio \(String(format: "%.2f", stored / base)))")

let ctx = core.context(for: "bench")
for i in 0..<10 { ctx.publish(relay(i)) }
let toggles = 500
let toggleTime = seconds {
    for n in 0..<toggles { ctx.report("r\(n % 10)", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool((n / 10) % 2 == 0)) }
}
print("output On/Off changes (\(toggles)):       \(String(format: "%8.0f", Double(toggles) / toggleTime)) writes/s, \(String(format: "%.2f", toggleTime / Double(toggles) * 1000)) ms each")

let home = core.home(for: .system)
let structure = try home.createStructure(named: "Bench")
let room = try home.createRoom(named: "Room", in: structure)
let edits = 500
let editTime = try seconds {
    for n in 0..<edits { try home.edit(.renameRoom(room, name: "Room \(n)")) }
}
print("layout edits (\(edits) room renames):     \(String(format: "%8.0f", Double(edits) / editTime)) edits/s, \(String(format: "%.2f", editTime / Double(edits) * 1000)) ms each")

let many = 1_000
for i in 10..<many { ctx.publish(relay(i)) }
let restartTime = try seconds {
    let reopened = try HearthDatabase(path: folder + "/bench.sqlite")
    let fresh = HomeCore(store: reopened)
    try fresh.restore()
    precondition(fresh.state.devices.count == many + 10)
}
print("restart with \(many + 10) devices (open + restore): \(String(format: "%.1f", restartTime * 1000)) ms")
try? FileManager.default.removeItem(atPath: folder)
