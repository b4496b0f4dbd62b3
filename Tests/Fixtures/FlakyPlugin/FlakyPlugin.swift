// A test fixture: a plugin whose `run` throws on its first `failures` runs, then keeps running.
// Each run publishes a lamp and reports it, so a test can watch the lamp go offline while the
// plugin is down and come back online when it runs again.
import DriverAPI
import HomeModel
import Synchronization

final class FlakyPlugin: DriverPlugin {
    struct Configuration: Decodable, Sendable {
        /// How many runs throw before one keeps running.
        var failures: Int
        /// The lamp's local ID.
        var device: String?
    }

    struct PlannedFailure: Error, CustomStringConvertible {
        let run: Int
        let of: Int
        var description: String { "planned failure \(run) of \(of)" }
    }

    let manifest = PluginManifest(id: "flaky", name: "Flaky", version: "1.0.0", summary: "Fails on purpose (tests)")
    var configurationType: (any Decodable.Type)? { Configuration.self }
    let runs = Mutex(0)
    let lamp = Mutex(false)

    func validate(configuration: PluginConfiguration) throws {
        let config = try configuration.decode(Configuration.self)
        if config.failures < 0 {
            throw HomeError.invalidArgument(configuration.problem(at: "failures", "must be 0 or more"))
        }
    }

    func run(context: any DriverContext) async throws {
        let config = try context.configuration.decode(Configuration.self)
        let device = config.device ?? "lamp"
        let run = runs.withLock { r in
            r += 1
            return r
        }
        context.publish(
            DeviceDescription(
                localID: device, name: "Flaky Lamp",
                types: [
                    DeviceTypeDescription(
                        id: OnOffLightDeviceType.identifier, isPrimary: true,
                        traits: [
                            IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                            OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(lamp.withLock { $0 })],
                        ])
                ]))
        context.report(device, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(lamp.withLock { $0 }))
        context.log(.info, "run \(run)")
        if run <= config.failures { throw PlannedFailure(run: run, of: config.failures) }
        // Runs until cancelled (the sleep throws CancellationError then).
        try await Task.sleep(for: .seconds(365 * 86400))
    }

    func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
        let on: Bool
        switch command.command {
        case OnOffTrait.Command.on: on = true
        case OnOffTrait.Command.off: on = false
        default: throw HomeError.unsupportedOperation("the flaky lamp supports on and off")
        }
        lamp.withLock { $0 = on }
        context.report(command.localID, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on))
        return .null
    }
}

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer { HearthPluginABI.export(FlakyPlugin()) }

// Marks this library as a test fixture: hearthd's folder scan passes it by (tests load it on purpose).
@_cdecl("hearth_plugin_test_fixture")
public func hearthPluginTestFixture() {}
