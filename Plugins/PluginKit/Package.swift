// swift-tools-version: 6.1
// PluginKit is its own package so that every type crossing into a plugin `.so` exists once:
// the host and every plugin link the one dynamic library `libPluginKit.so`.
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "PluginKit",
    products: [
        // HomeModel (device types, traits, values, naming rules) and DriverAPI (the plugin
        // surface) live in one shared library. DriverTesting (the in-memory host for plugins'
        // tests) is the package beside this one, Plugins/DriverTesting: not in production.
        .library(name: "PluginKit", type: .dynamic, targets: ["HomeModel", "DriverAPI"]),
    ],
    targets: [
        .target(name: "HomeModel", swiftSettings: settings),
        .target(name: "DriverAPI", dependencies: ["HomeModel"], swiftSettings: settings),
    ],
    swiftLanguageModes: [.v6]
)
