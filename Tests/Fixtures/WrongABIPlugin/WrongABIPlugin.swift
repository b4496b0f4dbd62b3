// A test fixture: a plugin `.so` that claims an ABI version this host does not speak.
// The host must refuse it before calling anything else.
import DriverAPI

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version + 1000 }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer {
    fatalError("the host must never create a plugin whose ABI version does not match")
}

// Marks this library as a test fixture: hearthd's folder scan passes it by (tests load it on purpose).
@_cdecl("hearth_plugin_test_fixture")
public func hearthPluginTestFixture() {}
