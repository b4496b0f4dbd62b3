// A test fixture: a lamp whose `toggle` command crashes the process, by `fatalError` or by a
// segmentation fault, or hangs it (`mode` in its configuration). Only ever run isolated.
import DriverAPI
#if canImport(Glibc)
    import Glibc
#endif
import HomeModel
import Synchronization

final class CrashingPlugin: DriverPlugin {
    struct Configuration: Decodable, Sendable {
        enum Mode: String, Decodable, Sendable { case fatalError, segfault, hang }
        var mode: Mode
    }

    let manifest = PluginManifest(id: "crashy", name: "Crashy", version: "1.0.0", summary: "Crashes on toggle (tests)")
    var configurationType: (any Decodable.Type)? { Configuration.self }
    let lamp = Mutex(false)

    func run(context: any DriverContext) async throws {
        context.publish(
            DeviceDescription(
                localID: "lamp", name: "Crashy Lamp",
                types: [
                    DeviceTypeDescription(
                        id: OnOffLightDeviceType.identifier, isPrimary: true,
                        traits: [
                            IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                            OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)],
                        ])
                ]))
        context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(lamp.withLock { $0 }))
        // Runs until cancelled (the sleep throws CancellationError then).
        try await Task.sleep(for: .seconds(365 * 86400))
    }

    func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
        switch command.command {
        case OnOffTrait.Command.on, OnOffTrait.Command.off:
            let on = command.command == OnOffTrait.Command.on
            lamp.withLock { $0 = on }
            context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on))
            return .null
        case OnOffTrait.Command.toggle:
            let mode = try context.configuration.decode(Configuration.self).mode
            switch mode {
            case .fatalError:
                fatalError("the crashy lamp crashes on toggle, as configured")
            case .segfault:
                let bad = UnsafeMutablePointer<Int>(bitPattern: 8)!
                bad.pointee = 1
                return .int(Int64(bad.pointee))
            case .hang:
                // The lamp turns on (the test's sign that the hang begins), then the whole process
                // stops, as a deadlocked one would: nothing in it runs again, pings included.
                // (Blocking the concurrency pool's threads is not enough on Linux: libdispatch
                // adds threads when its workers block, and the message loop answers again.)
                lamp.withLock { $0 = true }
                context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))
                raise(SIGSTOP)
                return .null
            }
        default:
            throw HomeError.unsupportedOperation("the crashy lamp supports on, off and toggle")
        }
    }
}

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer { HearthPluginABI.export(CrashingPlugin()) }

// Marks this library as a test fixture: hearthd's folder scan passes it by (tests load it on purpose).
@_cdecl("hearth_plugin_test_fixture")
public func hearthPluginTestFixture() {}
