// swift-tools-version: 6.1
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let pluginKit = Target.Dependency.product(name: "PluginKit", package: "PluginKit")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")

let package = Package(
    name: "Hearth",
    products: [
        .executable(name: "hearthd", targets: ["hearthd"]),
        .executable(name: "hearth", targets: ["hearth"]),
        // First-party driver plugins: each a `.so` the host loads exactly like a third-party one.
        .library(name: "DemoPlugin", type: .dynamic, targets: ["DemoPlugin"]),
        .library(name: "GPIOPlugin", type: .dynamic, targets: ["GPIOPlugin"]),
        .executable(name: "gpio-benchmark", targets: ["gpio-benchmark"]),
        // Test fixtures: plugins that are wrong on purpose.
        .library(name: "WrongABIPlugin", type: .dynamic, targets: ["WrongABIPlugin"]),
    ],
    dependencies: [
        .package(path: "Plugins/PluginKit"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
    ],
    targets: [
        .target(
            name: "HomeCore",
            dependencies: [
                pluginKit, logging,
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: settings),
        .target(
            name: "PluginHost",
            dependencies: [
                pluginKit, "HomeCore", logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: settings),
        .executableTarget(
            name: "hearthd",
            dependencies: [
                "HomeCore", "PluginHost", pluginKit, logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib"])]),
        .executableTarget(
            name: "hearth",
            dependencies: [
                pluginKit,
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib"])]),
        // Regenerates Plugins/PluginKit/Sources/HomeModel/Generated from catalog/matter.json.
        .executableTarget(name: "hearth-catalog-gen", path: "Sources/hearth-catalog-gen", swiftSettings: settings),

        .target(
            name: "DemoPlugin", dependencies: [pluginKit], path: "Plugins/Demo", swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../.."])]),
        // The GPIO plugin: libgpiod v1 behind a narrow C shim (CShim), the driver itself (Kit:
        // backends, configuration, state machines; tests link it directly), and the .so's entry
        // points (Plugin).
        .target(
            name: "CHearthGPIO", path: "Plugins/GPIO/CShim",
            linkerSettings: [.linkedLibrary("gpiod")]),
        .target(name: "GPIOKit", dependencies: [pluginKit, "CHearthGPIO"], path: "Plugins/GPIO/Kit", swiftSettings: settings),
        .target(
            name: "GPIOPlugin", dependencies: [pluginKit, "GPIOKit"], path: "Plugins/GPIO/Plugin", swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../.."])]),
        .executableTarget(
            name: "gpio-benchmark", dependencies: [pluginKit, "GPIOKit", "HomeCore"], path: "Benchmarks/GPIOBenchmark",
            swiftSettings: settings),
        .target(
            name: "WrongABIPlugin", dependencies: [pluginKit], path: "Tests/Fixtures/WrongABIPlugin",
            swiftSettings: settings),

        .testTarget(name: "HomeModelTests", dependencies: [pluginKit], swiftSettings: settings),
        .testTarget(name: "HomeCoreTests", dependencies: ["HomeCore", pluginKit], swiftSettings: settings),
        .testTarget(
            name: "GPIOPluginTests", dependencies: ["GPIOKit", "HomeCore", "PluginHost", pluginKit], swiftSettings: settings),
        .testTarget(
            name: "PluginHostTests", dependencies: ["PluginHost", "HomeCore", pluginKit, logging],
            swiftSettings: settings),
    ],
    swiftLanguageModes: [.v6]
)
