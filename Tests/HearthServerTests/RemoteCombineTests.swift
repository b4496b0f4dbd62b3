import Foundation
import HearthClient
import HomeCombine
import HomeModel
import HomeStorage
import OpenCombine
import Testing

/// The network client's queries as publishers (HomeCombine over HearthClient), against a real
/// server: live, deduplicated with the seed's operators, and failing with `permissionDenied`
/// when the session is revoked.
@Suite(.timeLimit(.minutes(1))) struct RemoteCombineTests {
    /// What a publisher delivered, in order: `value <text>`, then `finished` or `failure <code>`.
    func record<P: Publisher>(_ publisher: P, into cancellables: inout Set<AnyCancellable>, _ text: @escaping (P.Output) -> String)
        -> AsyncStream<String> where P.Failure == HomeError
    {
        let (events, sink) = AsyncStream<String>.makeStream()
        publisher
            .sink(
                receiveCompletion: { completion in
                    switch completion {
                    case .finished: sink.yield("finished")
                    case .failure(let e): sink.yield("failure \(e.code)")
                    }
                },
                receiveValue: { sink.yield("value \(text($0))") }
            )
            .store(in: &cancellables)
        return events
    }

    @Test func deviceAndTraitPublishers_areLive_andRemoveDuplicates() async throws {
        try await TestHome.with { server in
            let adminToken = try server.adminToken()
            _ = try server.memberToken()
            let home = try await HearthClient.Home.signIn(url: server.baseURL, username: "mia", password: "member password")
            let lamp = try await home.currentDevice(id: TestHome.lamp)
            var cancellables = Set<AnyCancellable>()

            let (states, stateSink) = AsyncStream<Bool?>.makeStream()
            lamp.types.subscribe(OnOffLightDeviceType.self)
                .compactMap { $0.matterTraits.onOffTrait }
                .removeDuplicates()
                .sink { onOffState in stateSink.yield(onOffState.attributes.onOff) }
                .store(in: &cancellables)
            let names = record(home.device(id: TestHome.lamp), into: &cancellables) { $0.name }
            let typeSets = record(lamp.types.subscribeAll().removeDuplicates(), into: &cancellables) { "\($0.ids.count)" }

            var state = states.makeAsyncIterator()
            var name = names.makeAsyncIterator()
            var types = typeSets.makeAsyncIterator()
            #expect(await state.next() == false)
            #expect(await name.next() == "value Lamp")
            #expect(await types.next() == "value 1")

            // Over the network, device(id:) is live: a rename comes through.
            let admin = HearthClient.Home(connection: HearthConnection(baseURL: server.baseURL, token: adminToken))
            let renamed = try await admin.currentDevice(id: TestHome.lamp).setName("Reading Lamp")
            #expect(renamed.name == "Reading Lamp")
            #expect(await name.next() == "value Reading Lamp")

            // The rename is not an On/Off change; the toggle is.
            try await lamp.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait?.toggle()
            #expect(await state.next() == true)
        }
    }

    @Test func batchedAndStreamPublishers_overTheNetwork() async throws {
        try await TestHome.with { server in
            let adminToken = try server.adminToken()
            _ = try server.memberToken()
            let home = try await HearthClient.Home.signIn(url: server.baseURL, username: "mia", password: "member password")
            var cancellables = Set<AnyCancellable>()
            let structures = record(
                home.structures().batched().compactMap { $0.first(where: { $0.id == TestHome.structure }) }.removeDuplicates(),
                into: &cancellables
            ) { $0.name }
            let rooms = record(home.rooms().stream(), into: &cancellables) { change in
                switch change {
                case .snapshot(let rooms, _): "snapshot \(rooms.map(\.name))"
                case .added(let room): "added \(room.name)"
                case .updated(let room): "updated \(room.name)"
                case .removed(let id): "removed \(id)"
                }
            }
            var s = structures.makeAsyncIterator()
            var r = rooms.makeAsyncIterator()
            #expect(await s.next() == "value Home")
            #expect(await r.next() == #"value snapshot ["Living Room"]"#)

            let admin = HearthClient.Home(connection: HearthConnection(baseURL: server.baseURL, token: adminToken))
            _ = try await admin.createRoom(named: "Kitchen", in: TestHome.structure)
            #expect(await r.next() == "value added Kitchen")
            _ = try await admin.renameStructure(TestHome.structure, to: "Cottage")
            #expect(await s.next() == "value Cottage")
        }
    }

    @Test func revokedSession_publishersFail_andSequencesThrow_permissionDenied() async throws {
        try await TestHome.with { server in
            _ = try server.memberToken()
            let home = try await HearthClient.Home.signIn(url: server.baseURL, username: "mia", password: "member password")
            let lamp = try await home.currentDevice(id: TestHome.lamp)
            var cancellables = Set<AnyCancellable>()
            let streams = [
                record(home.devices().batched(), into: &cancellables) { "\($0.count)" },
                record(home.rooms().stream(), into: &cancellables) { _ in "change" },
                record(home.device(id: TestHome.lamp), into: &cancellables) { $0.name },
                record(lamp.types.subscribe(OnOffLightDeviceType.self), into: &cancellables) { _ in "light" },
            ]
            let sequence: RemoteUpdates<[HomeDevice]> = home.devices().batched()
            var iterator = sequence.throwing().makeAsyncIterator()
            for s in streams {
                var it = s.makeAsyncIterator()
                #expect(await it.next()?.hasPrefix("value") == true)
            }
            #expect(try await iterator.next()?.count == 3)
            #expect(home.revocation == nil)

            try await home.disconnect()  // revokes the token

            for (i, s) in streams.enumerated() {
                var last: String?
                for await e in s {
                    last = e
                    if !e.hasPrefix("value") { break }
                }
                #expect(last == "failure permissionDenied", "publisher \(i)")
            }
            do {
                while try await iterator.next() != nil {}
                Issue.record("the sequence ended without an error")
            } catch {
                #expect((error as? HomeError)?.code == .permissionDenied)
            }
            #expect(sequence.failure?.code == .permissionDenied)
            #expect(home.revocation?.code == .permissionDenied)
        }
    }
}
