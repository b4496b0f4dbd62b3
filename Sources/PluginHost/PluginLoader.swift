public import DriverAPI
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Why a `.so` was not loaded. Each message names the file and what to do.
public struct PluginLoadError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Reason: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let unreadable = Reason(rawValue: "unreadable")
        public static let notELF = Reason(rawValue: "notELF")
        public static let dlopenFailed = Reason(rawValue: "dlopenFailed")
        public static let missingSymbol = Reason(rawValue: "missingSymbol")
        public static let abiMismatch = Reason(rawValue: "abiMismatch")
        public static let compilerMismatch = Reason(rawValue: "compilerMismatch")
        public static let duplicateID = Reason(rawValue: "duplicateID")
        public static let invalidManifest = Reason(rawValue: "invalidManifest")
    }

    public let path: String
    public let reason: Reason
    public let message: String
    /// The plugin's ID when the file got far enough to say it (a duplicate, an invalid manifest).
    public let pluginID: String?

    public init(path: String, reason: Reason, message: String, pluginID: String? = nil) {
        self.path = path
        self.reason = reason
        self.message = message
        self.pluginID = pluginID
    }

    public var description: String { "\(path): \(message)" }
}

/// A plugin loaded from its `.so`.
public struct LoadedPlugin: Sendable {
    public let path: String
    public let manifest: PluginManifest
    public let plugin: any DriverPlugin

    public init(path: String, manifest: PluginManifest, plugin: any DriverPlugin) {
        self.path = path
        self.manifest = manifest
        self.plugin = plugin
    }
}

/// Loads plugin `.so` files with `dlopen` and checks them before touching anything else.
///
/// Order of checks: the file is an ELF object; `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)`
/// succeeds; `hearth_plugin_abi_version` exists and equals ``HearthPluginABI/version``;
/// `hearth_plugin_compiler_tag` matches the host's; only then is `hearth_plugin_create` called.
/// Plugins are never unloaded (`dlclose` would leave dangling Swift metadata).
public enum PluginLoader {
    public static func load(_ path: String) throws(PluginLoadError) -> LoadedPlugin {
        func fail(_ reason: PluginLoadError.Reason, _ message: String) -> PluginLoadError {
            PluginLoadError(path: path, reason: reason, message: message)
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw fail(.unreadable, "cannot be read (missing, or no permission)")
        }
        let magic = (try? handle.read(upToCount: 4)) ?? Data()
        try? handle.close()
        guard magic == Data([0x7F, 0x45, 0x4C, 0x46]) else {
            throw fail(.notELF, "not a plugin: the file is not an ELF shared object")
        }
        guard let lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw fail(.dlopenFailed, "cannot be loaded: \(why)")
        }
        func symbol(_ name: String) -> UnsafeMutableRawPointer? { dlsym(lib, name) }
        guard let versionSymbol = symbol(HearthPluginABI.versionSymbol) else {
            throw fail(.missingSymbol, "not a Hearth plugin: it does not export \(HearthPluginABI.versionSymbol)")
        }
        typealias VersionFn = @convention(c) () -> UInt32
        let version = unsafeBitCast(versionSymbol, to: VersionFn.self)()
        guard version == HearthPluginABI.version else {
            throw fail(
                .abiMismatch,
                "built for plugin ABI \(version), but this hearthd speaks ABI \(HearthPluginABI.version); rebuild the plugin against this PluginKit")
        }
        guard let tagSymbol = symbol(HearthPluginABI.compilerTagSymbol) else {
            throw fail(.missingSymbol, "not a Hearth plugin: it does not export \(HearthPluginABI.compilerTagSymbol)")
        }
        typealias TagFn = @convention(c) () -> UnsafePointer<CChar>
        let tag = String(cString: unsafeBitCast(tagSymbol, to: TagFn.self)())
        guard tag == HearthPluginABI.compilerTagString else {
            throw fail(
                .compilerMismatch,
                "built with \(tag), but this hearthd was built with \(HearthPluginABI.compilerTagString); rebuild the plugin with the same Swift")
        }
        guard let createSymbol = symbol(HearthPluginABI.createSymbol) else {
            throw fail(.missingSymbol, "not a Hearth plugin: it does not export \(HearthPluginABI.createSymbol)")
        }
        typealias CreateFn = @convention(c) () -> UnsafeMutableRawPointer
        let plugin = HearthPluginABI.take(unsafeBitCast(createSymbol, to: CreateFn.self)())
        let manifest = plugin.manifest
        guard !manifest.id.isEmpty, manifest.id.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }),
            manifest.id.allSatisfy(\.isASCII)
        else {
            throw fail(.invalidManifest, "plugin id '\(manifest.id)' must be lowercase letters, digits and '-'")
        }
        return LoadedPlugin(path: path, manifest: manifest, plugin: plugin)
    }

    /// The symbol a test fixture exports so that a folder scan passes it by: the fixtures are
    /// built next to `hearthd` in a development tree and must not join the daemon's plugins.
    public static let testFixtureSymbol = "hearth_plugin_test_fixture"

    /// Loads every `.so` in the directories, in name order. A file that fails, or whose plugin
    /// ID another file already took, is returned as an error; the others still load.
    ///
    /// Test fixtures (files exporting ``testFixtureSymbol``) are passed by unless
    /// `includeTestFixtures` is set; folders that do not exist are passed by.
    public static func loadAll(
        from directories: [String], includeTestFixtures: Bool = false
    ) -> (loaded: [LoadedPlugin], rejected: [PluginLoadError]) {
        var loaded: [LoadedPlugin] = []
        var rejected: [PluginLoadError] = []
        var seen = Set<String>()
        for dir in directories {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            for file in files.sorted() where file.hasSuffix(".so") && !isLibrary(file) {
                let path = (dir as NSString).appendingPathComponent(file)
                let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                guard seen.insert(resolved).inserted else { continue }
                if !includeTestFixtures && isTestFixture(path) { continue }
                do throws(PluginLoadError) {
                    let p = try load(path)
                    if let other = loaded.first(where: { $0.manifest.id == p.manifest.id }) {
                        rejected.append(
                            PluginLoadError(
                                path: path, reason: .duplicateID,
                                message: "plugin id '\(p.manifest.id)' is already taken by \(other.path); only the first is used",
                                pluginID: p.manifest.id))
                    } else {
                        loaded.append(p)
                    }
                } catch {
                    rejected.append(error)
                }
            }
        }
        return (loaded, rejected)
    }

    static func isTestFixture(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        let magic = (try? handle.read(upToCount: 4)) ?? Data()
        try? handle.close()
        guard magic == Data([0x7F, 0x45, 0x4C, 0x46]), let lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE) else {
            return false
        }
        return dlsym(lib, testFixtureSymbol) != nil
    }

    /// Shared libraries that sit beside plugins but are not plugins (PluginKit itself, the
    /// Swift runtime in an install tree).
    static func isLibrary(_ file: String) -> Bool {
        file == "libPluginKit.so" || file.hasPrefix("libswift") || file.hasPrefix("libFoundation")
            || file.hasPrefix("lib_") || file.hasPrefix("libXCTest") || file.hasPrefix("libTesting")
            || file.hasPrefix("libdispatch") || file.hasPrefix("libBlocksRuntime")
    }
}
