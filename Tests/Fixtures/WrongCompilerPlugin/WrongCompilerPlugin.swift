// A test fixture: a plugin `.so` that says it was built by another Swift compiler.
// The host must refuse it before calling anything else.
import DriverAPI

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> {
    let tag: StaticString = "swift-1.0"
    return UnsafeRawPointer(tag.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer {
    fatalError("the host must never create a plugin built by another compiler")
}

// Marks this library as a test fixture: hearthd's folder scan passes it by (tests load it on purpose).
@_cdecl("hearth_plugin_test_fixture")
public func hearthPluginTestFixture() {}
