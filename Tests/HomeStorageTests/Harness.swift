import DriverAPI
import Foundation
import GRDB
import HomeCore
import HomeModel
import HomeStorage
import Synchronization

/// A core over a real SQLite file, and the same file reopened as a restart would.
struct Harness {
    let path: String
    let db: HearthDatabase
    let core: HomeCore
    var home: Home { core.home(for: .system) }
    var member: Home { core.home(for: Principal(id: "user:bob", role: .member)) }

    /// A clock the test moves: nanoseconds since the epoch.
    final class Clock: Sendable {
        let value = Mutex<UInt64>(1_000)
        func advance(_ by: UInt64) { value.withLock { $0 += by } }
        var now: UInt64 { value.withLock { $0 } }
    }

    init(path: String, clock: Clock = Clock()) throws {
        self.path = path
        db = try HearthDatabase(path: path)
        core = HomeCore(store: db, now: { clock.now })
        try core.restore()
    }

    /// A new database connection and core over the same file (the daemon restarted).
    func restarted(clock: Clock = Clock()) throws -> Harness { try Harness(path: path, clock: clock) }

    func context(_ plugin: String = "gpio") -> any DriverContext { core.context(for: plugin) }

    static func relay(_ local: String = "relay", name: String = "Relay", on: Bool = false, hint: CommissionHint? = nil) -> DeviceDescription {
        DeviceDescription(
            localID: local, name: name,
            types: [
                DeviceTypeDescription(
                    id: OnOffPlugInUnitDeviceType.identifier, isPrimary: true,
                    traits: [OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(on)]])
            ], commission: hint)
    }

    static func door(_ local: String = "door", name: String = "Door") -> DeviceDescription {
        DeviceDescription(
            localID: local, name: name,
            types: [
                DeviceTypeDescription(
                    id: ContactSensorDeviceType.identifier, isPrimary: true,
                    traits: [BooleanStateTrait.identifier: [BooleanStateTrait.Attribute.stateValue: .bool(true)]])
            ])
    }

    /// A multisensor: temperature (primary as the plugin says) and humidity.
    static func multisensor(_ local: String = "multi") -> DeviceDescription {
        DeviceDescription(
            localID: local, name: "Multisensor",
            types: [
                DeviceTypeDescription(
                    id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                    traits: [TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(2100)]]),
                DeviceTypeDescription(
                    id: HumiditySensorDeviceType.identifier, isPrimary: false,
                    traits: [RelativeHumidityMeasurementTrait.identifier: [RelativeHumidityMeasurementTrait.Attribute.measuredValue: .int(4500)]]),
            ])
    }
}
