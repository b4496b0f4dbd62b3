import DriverAPI
import HomeCore
import HomeModel
import Synchronization
import Testing

/// A store that keeps every delta it is handed, in memory (the core's side of the contract;
/// HomeStorageTests cover the SQLite side).
final class RecordingStore: LayoutStore, Sendable {
    let deltas = Mutex<[LayoutDelta]>([])
    func loadLayout() throws -> (structures: [StructureSnapshot], rooms: [RoomSnapshot], devices: [DeviceSnapshot]) { ([], [], []) }
    func persist(_ delta: LayoutDelta) throws { deltas.withLock { $0.append(delta) } }
}

@Suite struct LayoutDeltaTests {
    static func lamp(_ on: Bool) -> DeviceDescription {
        DeviceDescription(
            localID: "lamp", name: "Lamp",
            types: [DeviceTypeDescription(id: OnOffLightDeviceType.identifier, isPrimary: true, traits: [OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(on)]])])
    }
    static func thermometer() -> DeviceDescription {
        DeviceDescription(
            localID: "thermo", name: "Thermometer",
            types: [DeviceTypeDescription(id: TemperatureSensorDeviceType.identifier, isPrimary: true, traits: [TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(2000)]])])
    }

    @Test func carriesOnOffOfOutputs_andNothingForSensorReports() {
        let store = RecordingStore()
        let core = HomeCore(store: store, now: { 42 })
        let context = core.context(for: "test")
        context.publish(Self.lamp(false))
        context.publish(Self.thermometer())
        store.deltas.withLock { $0.removeAll() }

        context.report("thermo", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, .int(2100))
        #expect(store.deltas.withLock { $0.isEmpty }, "a sensor report must not be written")

        context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))
        let deltas = store.deltas.withLock { $0 }
        #expect(deltas.count == 1)
        #expect(deltas.first?.outputStates == [DeviceID(plugin: "test", local: "lamp"): true])
        #expect(deltas.first?.upserted.isEmpty == true)
        #expect(deltas.first?.at == 42)
    }
}
