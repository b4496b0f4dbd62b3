import DriverAPI
import GPIOKit

// The C entry points of the GPIO plugin `.so` (see HearthPluginABI).

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer {
    HearthPluginABI.export(GPIODriverPlugin(clock: ContinuousClock()))
}
