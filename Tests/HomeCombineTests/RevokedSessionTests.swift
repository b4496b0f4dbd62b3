import DriverAPI
import HomeCombine
import HomeCore
import HomeModel
import OpenCombine
import Testing

/// A revoked session's in-process publishers fail with `permissionDenied`, and its sequences
/// say so; a normal end is told apart.
@Suite(.timeLimit(.minutes(1))) struct RevokedSessionTests {
    let core = HomeCore()
    let driver: any DriverContext

    init() {
        driver = core.context(for: "p")
        driver.publish(
            DeviceDescription(
                localID: "lamp", name: "Lamp",
                types: [
                    DeviceTypeDescription(
                        id: OnOffLightDeviceType.identifier, isPrimary: true,
                        traits: [
                            IdentifyTrait.identifier: [IdentifyTrait.Attribute.identifyTime: .int(0)], GroupsTrait.identifier: [:],
                            OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)],
                        ])
                ], commission: CommissionHint(name: "Lamp", room: "Kitchen")))
    }

    func member(_ session: String) -> Home { core.home(for: Principal(id: "mia", role: .member, sessionID: session)) }

    /// What a publisher delivered, as text, in order.
    func record<P: Publisher>(_ publisher: P, into cancellables: inout Set<AnyCancellable>) -> AsyncStream<String>
    where P.Failure == HomeError {
        let (events, sink) = AsyncStream<String>.makeStream()
        publisher
            .sink(
                receiveCompletion: { completion in
                    switch completion {
                    case .finished: sink.yield("finished")
                    case .failure(let e): sink.yield("failure \(e.code)")
                    }
                },
                receiveValue: { _ in sink.yield("value") }
            )
            .store(in: &cancellables)
        return events
    }

    @Test func revoking_failsEveryPublisher_withPermissionDenied() async throws {
        let home = member("s1")
        let device = try home.currentDevice(id: "p:lamp")
        var cancellables = Set<AnyCancellable>()
        let streams = [
            record(home.devices().batched(), into: &cancellables),
            record(home.structures().stream(), into: &cancellables),
            record(home.device(id: "p:lamp"), into: &cancellables),
            record(device.types.subscribe(OnOffLightDeviceType.self), into: &cancellables),
            record(device.types.subscribeAll(), into: &cancellables),
        ]
        for s in streams {
            var it = s.makeAsyncIterator()
            #expect(await it.next() == "value")
        }
        core.revoke(session: "s1")
        for (i, s) in streams.enumerated() {
            var last: String?
            for await e in s {
                last = e
                if e != "value" { break }
            }
            #expect(last == "failure permissionDenied", "publisher \(i)")
        }
    }

    @Test func revoking_endsSequences_thatSayWhy() async throws {
        let home = member("s2")
        let updates: Updates<HomeSet<HomeDevice>> = home.devices().batched()
        var it = updates.throwing().makeAsyncIterator()
        #expect(try await it.next()?.count == 1)
        core.revoke(session: "s2")
        await #expect(throws: HomeError.self) {
            while try await it.next() != nil {}
        }
        #expect(updates.failure?.code == .permissionDenied)
    }

    @Test func aNormalEnd_isNotAFailure() async throws {
        let home = member("s3")
        var cancellables = Set<AnyCancellable>()
        let events = record(home.device(id: "p:lamp"), into: &cancellables)
        var it = events.makeAsyncIterator()
        #expect(await it.next() == "value")
        try core.home(for: .system).edit(.decommission("p:lamp"))
        var last: String?
        while let e = await it.next() {
            last = e
            if e != "value" { break }
        }
        #expect(last == "finished", "a removed device ends its subscription normally")
        #expect(home.device(id: "p:lamp").failure == nil)
    }

    @Test func onOffTrait_compactMapRemoveDuplicates_skipsChangesToOtherTraits() async throws {
        let home = core.home(for: .system)
        let device = try home.currentDevice(id: "p:lamp")
        var cancellables = Set<AnyCancellable>()
        let (states, sink) = AsyncStream<Bool?>.makeStream()
        // The seed's snippet: typed traits are Equatable.
        device.types.subscribe(OnOffLightDeviceType.self)
            .compactMap { $0.matterTraits.onOffTrait }
            .removeDuplicates()
            .sink { onOffState in sink.yield(onOffState.attributes.onOff) }
            .store(in: &cancellables)
        var it = states.makeAsyncIterator()
        #expect(await it.next() == false)
        // Identify changes: a new OnOffLight value, but the same On/Off trait.
        driver.report("lamp", IdentifyTrait.identifier, IdentifyTrait.Attribute.identifyTime, .int(5))
        driver.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        #expect(await it.next() == true, "the Identify change is not an On/Off change")
    }

    @Test func subscribeAll_traitsContains_andSetName() async throws {
        let home = core.home(for: .system)
        let device = try home.currentDevice(id: "p:lamp")
        var all = device.types.subscribeAll().makeAsyncIterator()
        let first = try #require(await all.next())
        let light = try #require(first[OnOffLightDeviceType.self])
        #expect(light.traits.contains(OnOffTrait.self))
        #expect(!light.traits.contains(LevelControlTrait.self))
        #expect(first.ids == [OnOffLightDeviceType.identifier])

        let renamed = try await device.setName("Desk Lamp")
        #expect(renamed.name == "Desk Lamp")
        #expect(try home.currentDevice(id: "p:lamp").name == "Desk Lamp")
        await #expect(throws: HomeError.self) { _ = try await device.setName("Desk Lamp 🔥") }
    }
}
