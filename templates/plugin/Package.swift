// swift-tools-version: 6.1
// A Hearth driver plugin: builds `libMyPlugin.so`, which hearthd loads from its plugin folder.
//
// It depends on PluginKit, the one shared library every plugin and the daemon link (so the
// types that cross between them exist once). Point HEARTH_PLUGINKIT at the PluginKit of the
// hearthd you run, or edit the default path below.
import PackageDescription

let pluginKit = Context.environment["HEARTH_PLUGINKIT"] ?? "../hearth/Plugins/PluginKit"
// DriverTesting (the in-memory host for the tests) is the package beside PluginKit; only the
// test target links it, so it never ships in the plugin.
let driverTesting = pluginKit.hasSuffix("/PluginKit") ? String(pluginKit.dropLast("PluginKit".count)) + "DriverTesting" : pluginKit + "/../DriverTesting"

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "MyPlugin",
    products: [
        .library(name: "MyPlugin", type: .dynamic, targets: ["MyPlugin"])
    ],
    dependencies: [
        .package(path: pluginKit),
        .package(path: driverTesting),
    ],
    targets: [
        .target(
            name: "MyPlugin",
            dependencies: [.product(name: "PluginKit", package: "PluginKit")],
            swiftSettings: settings,
            // Installed in lib/hearth/plugins, the plugin finds libPluginKit.so two folders up.
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../.."])]),
        .testTarget(
            name: "MyPluginTests",
            dependencies: [
                "MyPlugin", .product(name: "PluginKit", package: "PluginKit"), .product(name: "DriverTesting", package: "DriverTesting"),
            ],
            swiftSettings: settings),
    ],
    swiftLanguageModes: [.v6]
)
