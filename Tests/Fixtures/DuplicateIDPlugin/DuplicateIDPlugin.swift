// A test fixture: a well-formed plugin that claims the ID of another fixture ("flaky").
// The host must load only one of the two and name both files in the refusal.
import DriverAPI
import HomeModel

final class DuplicateIDPlugin: DriverPlugin {
    let manifest = PluginManifest(id: "flaky", name: "Another flaky", version: "0.0.1")

    func run(context: any DriverContext) async throws {}

    func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
        throw HomeError.unsupportedOperation("no devices")
    }
}

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer { HearthPluginABI.export(DuplicateIDPlugin()) }

// Marks this library as a test fixture: hearthd's folder scan passes it by (tests load it on purpose).
@_cdecl("hearth_plugin_test_fixture")
public func hearthPluginTestFixture() {}
