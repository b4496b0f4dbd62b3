import DriverAPI
import Foundation
import GRDB
import HomeCore
import HomeModel
import HomeStorage
import Testing

/// Commissioning on a real SQLite file: the discovered inbox, names checked by the naming
/// rules (with their suggestions), primary-type confirmation, decommissioning, pre-commissioning
/// from the configuration, and every step observable and surviving a restart.
@Suite struct CommissioningTests {
    static let relay = DeviceID(plugin: "gpio", local: "relay")

    @Test func discoveredDevices_waitInTheInbox_andSurviveRestart() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        h.context().publish(Harness.relay())
        #expect(try await h.home.discoveredDevices().list().map(\.id) == [Self.relay])
        #expect(try await h.home.devices().list().isEmpty)
        #expect(try await h.member.discoveredDevices().list().isEmpty)

        let r = try h.restarted()
        let inbox = try await r.home.discoveredDevices().list()
        #expect(inbox.map(\.id) == [Self.relay])
        #expect(inbox.first?.snapshot.commissioning == .discovered)
    }

    @Test func invalidName_isRefused_withTheBrokenRule_andASuggestion() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        h.context().publish(Harness.relay())

        let error = #expect(throws: HomeError.self) {
            try h.home.commission(Self.relay, name: "Pump!! 💧", structure: home)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("a name may not contain emoji") == true)
        #expect(error?.message.contains("only letters, digits, spaces and apostrophes") == true)
        #expect(error?.message.contains("try 'Pump'") == true)
        // Nothing changed, in memory or in the file.
        #expect(try await h.home.discoveredDevices().list().map(\.id) == [Self.relay])
        #expect(try h.db.registryEntry(Self.relay)?.device.commissioning == .discovered)
    }

    @Test func nameThatRepeatsItsRoom_isAccepted_withAWarningAndASuggestion() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        let kitchen = try h.home.createRoom(named: "Kitchen", in: home)
        h.context().publish(Harness.relay())

        let verdict = try h.home.commission(Self.relay, name: "Kitchen light", structure: home, room: kitchen)
        #expect(verdict.isValid)
        #expect(verdict.warning?.contains("repeats its room 'Kitchen'") == true)
        #expect(verdict.suggestions == ["Light"])
        let r = try h.restarted()
        let device = try r.home.currentDevice(id: Self.relay)
        #expect(device.name == "Kitchen light")
        #expect(device.snapshot.roomID == kitchen)
    }

    @Test func primaryTypeConfirmation_isSaved_andAnUnknownTypeIsRefused() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        h.context().publish(Harness.multisensor())
        let multi = DeviceID(plugin: "gpio", local: "multi")

        let wrong = #expect(throws: HomeError.self) {
            try h.home.commission(multi, name: "Sensor", structure: home, primaryType: OnOffLightDeviceType.identifier)
        }
        #expect(wrong?.code == .invalidArgument)
        #expect(wrong?.message.contains("to make primary") == true)
        try h.home.commission(multi, name: "Sensor", structure: home, primaryType: HumiditySensorDeviceType.identifier)

        let r = try h.restarted()
        let device = try r.home.currentDevice(id: multi)
        #expect(device.snapshot.primaryType?.id == HumiditySensorDeviceType.identifier)
        #expect(device.snapshot.types.filter(\.isPrimary).count == 1)
    }

    @Test func everyStep_isObservable_inTheCoresQueries() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let home = try h.home.createStructure(named: "Home")
        let hall = try h.home.createRoom(named: "Hall", in: home)
        var inbox = h.home.discoveredDevices().batched().makeAsyncIterator()
        var devices = h.home.devices().batched().makeAsyncIterator()
        #expect(await inbox.next()?.count == 0)
        #expect(await devices.next()?.count == 0)

        h.context().publish(Harness.relay())
        #expect(await inbox.next()?.map(\.id) == [Self.relay])

        try h.home.commission(Self.relay, name: "Pump", structure: home, room: hall)
        #expect(await inbox.next()?.count == 0)
        #expect(await devices.next()?.map(\.name) == ["Pump"])

        try h.home.edit(.decommission(Self.relay))
        #expect(await devices.next()?.count == 0)
        let back = await inbox.next()
        #expect(back?.map(\.id) == [Self.relay])
        #expect(back?.first?.snapshot.roomID == nil)

        let r = try h.restarted()
        #expect(try await r.home.discoveredDevices().list().map(\.id) == [Self.relay])
        #expect(try r.db.registryEntry(Self.relay)?.device.commissioning == .discovered)
    }

    @Test func configurationPreCommissions_onFirstStartOnly() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        let hint = CommissionHint(name: "Garden pump", room: "Garden")
        h.context().publish(Harness.relay(hint: hint))
        let device = try h.home.currentDevice(id: Self.relay)
        #expect(device.snapshot.commissioning == .commissioned)
        #expect(device.name == "Garden pump")

        // After a restart the person's rename wins over the configuration's name.
        let r = try h.restarted()
        _ = try await r.home.setName(device: Self.relay, name: "Fountain")
        let r2 = try r.restarted()
        r2.context().publish(Harness.relay(hint: hint))
        let again = try r2.home.currentDevice(id: Self.relay)
        #expect(again.name == "Fountain")
        #expect(try await r2.home.rooms().list().map(\.name) == ["Garden"])
        #expect(try await r2.home.structures().list().map(\.name) == ["Home"])
    }

    @Test func aDeviceOnlineAtShutdown_isUnknownAfterRestart_untilItsPluginReports() async throws {
        let dir = TempDir()
        let h = try Harness(path: dir.path("hearth.sqlite"))
        h.context().publish(Harness.relay())
        let r = try h.restarted()
        #expect(try r.home.currentDevice(id: Self.relay).snapshot.sourceConnectivity.connectivityState == .unknown)
        r.context().publish(Harness.relay())
        #expect(try r.home.currentDevice(id: Self.relay).snapshot.sourceConnectivity.connectivityState == .online)
    }

    @Test func devicesAPluginStopsReporting_stayOffline_untilAnAdminRemovesThem() async throws {
        let dir = TempDir()
        let clock = Harness.Clock()
        let h = try Harness(path: dir.path("hearth.sqlite"), clock: clock)
        let home = try h.home.createStructure(named: "Home")
        h.context().publish(Harness.relay())
        try h.home.commission(Self.relay, name: "Pump", structure: home)
        let firstSeen = try #require(try h.db.registryEntry(Self.relay)).firstSeen
        clock.advance(5_000)
        h.context().remove(device: "relay")

        let kept = try h.home.currentDevice(id: Self.relay)
        #expect(kept.snapshot.sourceConnectivity.connectivityState == .offline)
        let entry = try #require(try h.db.registryEntry(Self.relay))
        #expect(entry.connectivity == .offline)
        #expect(entry.firstSeen == firstSeen)

        let r = try h.restarted()
        #expect(try await r.home.devices().list().map(\.id) == [Self.relay])
        #expect(try r.db.registryEntry(Self.relay)?.connectivity == .offline)
        #expect(try r.home.currentDevice(id: Self.relay).snapshot.sourceConnectivity.connectivityState == .offline)

        try r.home.edit(.removeDevice(Self.relay))
        #expect(try r.db.registryEntry(Self.relay) == nil)
        let r2 = try r.restarted()
        #expect(try await r2.home.devices().list().isEmpty)
    }
}
