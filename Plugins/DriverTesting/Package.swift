// swift-tools-version: 6.1
// DriverTesting: the in-memory host and manual clock plugins' tests use. A package of its own,
// beside PluginKit, so that it stays out of the production `libPluginKit.so` and still links
// PluginKit's one shared library (a target of the PluginKit package itself would link copies
// of HomeModel and DriverAPI into every test binary: two copies of each type).
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "DriverTesting",
    products: [
        // Linked into test binaries only.
        .library(name: "DriverTesting", targets: ["DriverTesting"])
    ],
    dependencies: [
        .package(path: "../PluginKit")
    ],
    targets: [
        .target(
            name: "DriverTesting", dependencies: [.product(name: "PluginKit", package: "PluginKit")], swiftSettings: settings)
    ],
    swiftLanguageModes: [.v6]
)
