/// The C entry-point convention between the host and a plugin `.so`.
///
/// A plugin exports three C symbols, each a few lines of Swift (copy them from the template):
///
/// ```swift
/// @_cdecl("hearth_plugin_abi_version")
/// public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }
/// @_cdecl("hearth_plugin_compiler_tag")
/// public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }
/// @_cdecl("hearth_plugin_create")
/// public func hearthPluginCreate() -> UnsafeMutableRawPointer { HearthPluginABI.export(MyPlugin()) }
/// ```
///
/// `version` and `compilerTag` are inlined into the plugin when it is compiled, so the host
/// compares what the plugin was built against with what the host runs. The host checks both
/// before it calls `hearth_plugin_create`.
public enum HearthPluginABI {
    /// The ABI version. Bump it on any change to DriverAPI or HomeModel that changes layout.
    ///
    /// 2: `DriverPlugin.configurationType` (the plugin's configuration schema).
    /// 3: `DriverContext.count(_:by:)` (plugin counters served at `/metrics`).
    /// 4: `DriverPlugin.doctor(_:)` (a plugin's own `hearth doctor` checks),
    ///    `DriverContext.reportHealth(_:)` (plugin health in `GET /plugins` and `/readyz`) and
    ///    `DriverContext.setConnectivity(_:device:trait:deviceType:)` (per-trait connectivity).
    /// 5: `DriverPlugin.vendorTraits` (a plugin's own traits, `TraitDescriptor.namespace`),
    ///    `DeviceDescription.identity` (`DeviceIdentity`, shown as `BasicInformation`) and
    ///    `DeviceDescription.suggestedRoom`.
    @inlinable public static var version: UInt32 { 5 }

    /// The Swift compiler the plugin was built with; Swift has no stable ABI between compiler
    /// releases for non-resilient libraries, so plugins must match the host's compiler.
    @inlinable public static var compilerTag: UnsafePointer<CChar> {
        #if compiler(>=6.4)
            let tag: StaticString = "swift-6.4+"
        #elseif compiler(>=6.3)
            let tag: StaticString = "swift-6.3"
        #elseif compiler(>=6.2)
            let tag: StaticString = "swift-6.2"
        #else
            let tag: StaticString = "swift-older"
        #endif
        return UnsafeRawPointer(tag.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// The compiler tag as a Swift string.
    @inlinable public static var compilerTagString: String { String(cString: compilerTag) }

    /// Symbol names the host looks up.
    public static let versionSymbol = "hearth_plugin_abi_version"
    public static let compilerTagSymbol = "hearth_plugin_compiler_tag"
    public static let createSymbol = "hearth_plugin_create"

    /// Wraps a plugin for `hearth_plugin_create`. The host takes ownership.
    public static func export(_ plugin: any DriverPlugin) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(PluginBox(plugin)).toOpaque()
    }

    /// Unwraps what `hearth_plugin_create` returned (host side).
    public static func take(_ pointer: UnsafeMutableRawPointer) -> any DriverPlugin {
        Unmanaged<PluginBox>.fromOpaque(pointer).takeRetainedValue().plugin
    }
}

/// The box a plugin crosses the C boundary in.
public final class PluginBox: Sendable {
    public let plugin: any DriverPlugin
    public init(_ plugin: any DriverPlugin) { self.plugin = plugin }
}
