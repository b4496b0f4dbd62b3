import DriverAPI
import HomeCore
import HomeModel
import Synchronization
import Testing

@Suite struct ControlTests {
    @Test func commandGoesToThePluginAndTheReportComesBack() async throws {
        let core = HomeCore()
        let driver = core.context(for: "p")
        core.setCommandHandler(FakeLampHardware(context: driver), for: "p")
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        let home = core.home(for: .system)
        let device = try home.currentDevice(id: "p:lamp")
        let light = try #require(await device.types.get(OnOffLightDeviceType.self))
        var updates = home.device(id: "p:lamp").makeAsyncIterator()
        _ = await updates.next()
        try await #require(light.matterTraits.onOffTrait).on()
        let after = try #require(await updates.next())
        #expect(await after.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff == true)
    }

    @Test func strictValidationRefusesUnsupportedCommandsBeforeTheDriver() async throws {
        let core = HomeCore(strictOperationValidation: true)
        let driver = core.context(for: "p")
        let recorder = RecordingHandler()
        core.setCommandHandler(recorder, for: "p")
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        let home = core.home(for: .system)
        await #expect(throws: HomeError.self) {
            try await home.invoke(CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevel, arguments: ["Level": 10]))
        }
        do {
            _ = try await home.invoke(CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: 0x77))
            Issue.record("expected unsupportedOperation")
        } catch let error as HomeError {
            #expect(error.code == .unsupportedOperation)
            #expect(error.message.contains("toggle"))
        }
        #expect(recorder.commands.isEmpty)
    }

    @Test func lenientValidationSendsAndReportsTheDriversError() async throws {
        let core = HomeCore(strictOperationValidation: false)
        let driver = core.context(for: "p")
        core.setCommandHandler(FakeLampHardware(context: driver), for: "p")
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        do {
            _ = try await core.home(for: .system).invoke(
                CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: 0x77))
            Issue.record("expected the driver's error")
        } catch let error as HomeError {
            // Lenient: the driver's own refusal is a driverError (docs/api.md), not the
            // catalogue's unsupportedOperation, so an app can tell the two apart.
            #expect(error.code == .driverError)
            #expect(error.message == "plugin p refused the command: lamp does on and off only")
        }
    }

    @Test func invalidArgumentsAreRefusedNamingTheField() async throws {
        let core = HomeCore()
        core.setCommandHandler(RecordingHandler(), for: "p")
        core.context(for: "p").publish(
            DeviceDescription(localID: "dim", name: "Dimmer", types: [
                DeviceTypeDescription(id: DimmableLightDeviceType.identifier, isPrimary: true, traits: [
                    IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:], OnOffTrait.identifier: [:], LevelControlTrait.identifier: [:],
                ])
            ], commission: CommissionHint(name: "Dimmer")))
        do {
            _ = try await core.home(for: .system).invoke(
                CommandRequest(device: "p:dim", deviceType: DimmableLightDeviceType.identifier, trait: LevelControlTrait.identifier,
                    command: LevelControlTrait.Command.moveToLevel, arguments: ["Level": 255, "OptionsMask": 0, "OptionsOverride": 0]))
            Issue.record("expected invalidArgument")
        } catch let error as HomeError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("Level"))
            #expect(error.message.contains("254"))
        }
    }

    @Test func offlineDeviceAndStoppedPluginAreReported() async throws {
        let core = HomeCore()
        let driver = core.context(for: "p")
        driver.publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        let request = CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        await #expect(throws: HomeError.deviceOffline("plugin p is not running; Lamp cannot be reached")) {
            try await core.home(for: .system).invoke(request)
        }
        core.setCommandHandler(RecordingHandler(), for: "p")
        driver.setConnectivity(.offline, device: "lamp")
        do {
            _ = try await core.home(for: .system).invoke(request)
            Issue.record("expected deviceOffline")
        } catch let error as HomeError {
            #expect(error.code == .deviceOffline)
        }
    }

    @Test func slowDriverTimesOut() async throws {
        let core = HomeCore(commandTimeout: .milliseconds(50))
        core.setCommandHandler(StuckHandler(), for: "p")
        core.context(for: "p").publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        do {
            _ = try await core.home(for: .system).invoke(
                CommandRequest(device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on))
            Issue.record("expected timeout")
        } catch let error as HomeError {
            #expect(error.code == .timeout)
        }
    }

    /// A driver hung in a call that ignores cancellation (blocking work, a continuation never
    /// resumed) must not hang the caller: the command still times out at the deadline.
    @Test(.timeLimit(.minutes(1))) func hungDriverThatIgnoresCancellation_stillTimesOut() async throws {
        let core = HomeCore(commandTimeout: .milliseconds(50))
        let hung = HungHandler()
        core.setCommandHandler(hung, for: "p")
        core.context(for: "p").publish(Fixtures.lamp(commission: Fixtures.inKitchen))
        let home = core.home(for: .system)
        let request = CommandRequest(
            device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)
        let command = await #expect(throws: HomeError.self) { try await home.invoke(request) }
        #expect(command?.code == .timeout)
        let write = await #expect(throws: HomeError.self) {
            try await home.write(
                device: "p:lamp", deviceType: OnOffLightDeviceType.identifier, trait: OnOffTrait.identifier,
                attribute: OnOffTrait.Attribute.onTime, value: .int(10))
        }
        #expect(write?.code == .timeout)
        #expect(hung.waiting == 2)
        // The driver comes back later: its late answers are dropped, nothing crashes.
        hung.release()
    }
}

/// A handler whose calls wait until `release()`, deaf to cancellation.
final class HungHandler: CommandHandler {
    let waiters = Mutex<[CheckedContinuation<Void, Never>]>([])
    var waiting: Int { waiters.withLock { $0.count } }
    func handle(_ command: DriverCommand) async throws -> Value {
        await withCheckedContinuation { c in waiters.withLock { $0.append(c) } }
        return .null
    }
    func write(_ write: DriverWrite) async throws {
        await withCheckedContinuation { c in waiters.withLock { $0.append(c) } }
    }
    func release() {
        for c in waiters.withLock({ w in
            defer { w = [] }
            return w
        }) { c.resume() }
    }
}

final class RecordingHandler: CommandHandler {
    let received = Mutex<[DriverCommand]>([])
    var commands: [DriverCommand] { received.withLock { $0 } }
    func handle(_ command: DriverCommand) async throws -> Value {
        received.withLock { $0.append(command) }
        return .null
    }
    func write(_ write: DriverWrite) async throws {}
}

/// A handler that never answers (until cancelled).
struct StuckHandler: CommandHandler {
    func handle(_ command: DriverCommand) async throws -> Value {
        try await Task.sleep(for: .seconds(3600))
        return .null
    }
    func write(_ write: DriverWrite) async throws {}
}
