import DriverAPI
import HomeCombine
import HomeCore
import HomeModel
import OpenCombine
import Testing

/// Combine code written the way the Google Home APIs' samples write it, running on Linux.
@Suite(.timeLimit(.minutes(1))) struct SeedStyleCombineTests {
    let core = HomeCore()
    let driver: any DriverContext

    init() {
        driver = core.context(for: "p")
        driver.publish(lamp(on: false))
    }

    func lamp(on: Bool) -> DeviceDescription {
        DeviceDescription(
            localID: "lamp", name: "Lamp",
            types: [
                DeviceTypeDescription(
                    id: OnOffLightDeviceType.identifier, isPrimary: true,
                    traits: [
                        IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                        OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(on)],
                    ])
            ], commission: CommissionHint(name: "Lamp", room: "Kitchen"))
    }

    @Test func batchedCompactMapRemoveDuplicatesSink() async throws {
        let home = core.home(for: .system)
        var cancellables = Set<AnyCancellable>()
        let (names, sink) = AsyncStream<String>.makeStream()

        home.devices().batched()
            .compactMap { devices in devices.first { $0.id == DeviceID(plugin: "p", local: "lamp") } }
            .map(\.name)
            .removeDuplicates()
            .sink { name in sink.yield(name) }
            .store(in: &cancellables)

        var it = names.makeAsyncIterator()
        #expect(await it.next() == "Lamp")
        // A change that leaves the name alone is filtered out by removeDuplicates;
        // the rename comes through.
        try home.edit(.moveDevice("p:lamp", to: nil))
        try home.edit(.renameDevice("p:lamp", name: "Desk Lamp"))
        #expect(await it.next() == "Desk Lamp")
        // Cancelling the sink ends the core subscription (the task it ran in is cancelled).
        cancellables.removeAll()
        while core.observerCount > 0 { await Task.yield() }
    }

    @Test func deviceTypeSubscribeAsAPublisher() async throws {
        let home = core.home(for: .system)
        let device = try home.currentDevice(id: "p:lamp")
        var cancellables = Set<AnyCancellable>()
        let (states, sink) = AsyncStream<Bool>.makeStream()

        device.types.subscribe(OnOffLightDeviceType.self)
            .compactMap { light in light.matterTraits.onOffTrait?.attributes.onOff }
            .removeDuplicates()
            .sink { isOn in sink.yield(isOn) }
            .store(in: &cancellables)

        var it = states.makeAsyncIterator()
        #expect(await it.next() == false)
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        #expect(await it.next() == true)
    }

    @Test func subscribingToAMissingTypeFinishesAtOnce() async throws {
        let device = try core.home(for: .system).currentDevice(id: "p:lamp")
        var cancellables = Set<AnyCancellable>()
        let (done, sink) = AsyncStream<String>.makeStream()
        device.types.subscribe(TemperatureSensorDeviceType.self)
            .sink(receiveCompletion: { _ in sink.yield("finished") }, receiveValue: { _ in sink.yield("value") })
            .store(in: &cancellables)
        var it = done.makeAsyncIterator()
        #expect(await it.next() == "finished")
    }
}
