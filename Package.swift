// swift-tools-version: 6.1
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let pluginKit = Target.Dependency.product(name: "PluginKit", package: "PluginKit")
/// The in-memory host for plugins' tests: its own package beside PluginKit, not in libPluginKit.so.
let driverTesting = Target.Dependency.product(name: "DriverTesting", package: "DriverTesting")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let grdb = Target.Dependency.product(name: "GRDB", package: "GRDB.swift")
let metrics = Target.Dependency.product(name: "CoreMetrics", package: "swift-metrics")

let package = Package(
    name: "Hearth",
    products: [
        .executable(name: "hearthd", targets: ["hearthd"]),
        .executable(name: "hearth", targets: ["hearth"]),
        // For apps: the `Home` API over the network, and publishers over it (Examples/SeedApp).
        .library(name: "HearthClient", targets: ["HearthClient"]),
        .library(name: "HomeCombine", targets: ["HomeCombine"]),
        // The automations' webhook POST (URLSession): hearthd dlopens it at the first webhook, so
        // FoundationNetworking and libcurl stay out of the daemon's start (issue 22).
        .library(name: "HearthWebhook", type: .dynamic, targets: ["HearthWebhook"]),
        // Test helper: commits layout edits in a loop (the kill -9 test kills it mid-burst).
        .executable(name: "hearth-storage-stress", targets: ["hearth-storage-stress"]),
        // Benchmark: what the SQLite store costs the core (prints figures).
        .executable(name: "hearth-storage-bench", targets: ["hearth-storage-bench"]),
        // First-party driver plugins: each a `.so` the host loads exactly like a third-party one.
        .library(name: "DemoPlugin", type: .dynamic, targets: ["DemoPlugin"]),
        .library(name: "MQTTPlugin", type: .dynamic, targets: ["MQTTPlugin"]),
        .library(name: "GPIOPlugin", type: .dynamic, targets: ["GPIOPlugin"]),
        .executable(name: "gpio-benchmark", targets: ["gpio-benchmark"]),
        .executable(name: "automation-benchmark", targets: ["automation-benchmark"]),
        // Test fixtures: plugins that are wrong on purpose.
        .library(name: "WrongABIPlugin", type: .dynamic, targets: ["WrongABIPlugin"]),
        .library(name: "WrongCompilerPlugin", type: .dynamic, targets: ["WrongCompilerPlugin"]),
        .library(name: "NoSymbolsPlugin", type: .dynamic, targets: ["NoSymbolsPlugin"]),
        .library(name: "DuplicateIDPlugin", type: .dynamic, targets: ["DuplicateIDPlugin"]),
        .library(name: "FlakyPlugin", type: .dynamic, targets: ["FlakyPlugin"]),
        .library(name: "CrashingPlugin", type: .dynamic, targets: ["CrashingPlugin"]),
        .executable(name: "mqtt-benchmark", targets: ["mqtt-benchmark"]),
        .executable(name: "mqtt-export-benchmark", targets: ["mqtt-export-benchmark"]),
        // Hostile-input run over the MQTT plugin's parsers and the plugin wire protocol (#14).
        .executable(name: "mqtt-fuzz", targets: ["mqtt-fuzz"]),
        // Matter protocol foundations (no home model): TLV, and its fuzzer.
        .library(name: "MatterTLV", targets: ["MatterTLV"]),
        .executable(name: "matter-tlv-fuzz", targets: ["matter-tlv-fuzz"]),
        .library(name: "MatterMessaging", targets: ["MatterMessaging"]),
        .executable(name: "matter-bench", targets: ["matter-bench"]),
        .executable(name: "matter-protocol-fuzz", targets: ["matter-protocol-fuzz"]),
    ],
    dependencies: [
        .package(path: "Plugins/PluginKit"),
        .package(path: "Plugins/DriverTesting"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/attaswift/BigInt", from: "6.0.1"),
    ],
    targets: [
        .target(
            name: "HomeCore",
            dependencies: [
                pluginKit, logging, metrics,
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: settings),
        // Scenes' recall lives in HomeCore; automations (issue 18): compiler/validator, engine on the
        // core's lossless change tap, durable timers, traces.
        .target(
            name: "HomeAutomation",
            dependencies: ["HomeCore", pluginKit, logging, .product(name: "HashTreeCollections", package: "swift-collections")],
            swiftSettings: settings),
        // libHearthWebhook.so: a C entry point over URLSession, no Hearth module (HomeAutomation's
        // WebhookLibrary loads it). RUNPATH: the installed Swift runtime (lib/hearth/runtime).
        .target(
            name: "HearthWebhook", swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/hearth/runtime"])]),
        // The core's and the network client's queries and subscriptions as OpenCombine publishers.
        .target(
            name: "HomeCombine",
            dependencies: ["HomeCore", "HearthClient", pluginKit, .product(name: "OpenCombine", package: "OpenCombine")],
            swiftSettings: settings),
        // Layout, device registry, users, tokens, app consent requests and grants in SQLite.
        .target(
            name: "HomeStorage",
            dependencies: [
                pluginKit, "HomeCore", logging, grdb, "MatterCommissioning",
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: settings),
        // The API's wire types, shared by the server and the client.
        .target(name: "HearthAPI", dependencies: [pluginKit], swiftSettings: settings),
        // HTTP + WebSocket API under /api/v1.
        .target(
            name: "HearthServer",
            dependencies: [
                "HomeCore", "HearthAPI", pluginKit, logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ],
            // The web page: plain HTML/CSS/JS modules, copied beside the binary (no build step).
            resources: [.copy("Web")],
            swiftSettings: settings),
        // The `Home` API over the network.
        .target(
            name: "HearthClient",
            dependencies: [
                pluginKit, "HearthAPI", logging,
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: settings),
        // `hearth.yaml`: read by hearthd, and by `hearth doctor` to check what hearthd will use.
        .target(
            name: "HearthConfiguration", dependencies: [pluginKit, .product(name: "Yams", package: "Yams")],
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
                "HomeCore", "HomeStorage", "PluginHost", "HearthServer", "HearthAPI", "HearthConfiguration", pluginKit, logging, metrics,
                "MQTTExport", "HomeAutomation", "HAPBridge", "HAP", "MatterBridge", "MatterHomeModel", "MatterInteraction", "MatterCommissioning",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib"])]),
        .executableTarget(
            name: "hearth",
            dependencies: [
                // A network client only: offline maintenance (doctor, backup, restore) is hearthd's.
                "HearthClient", "HearthAPI", pluginKit,
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib"])]),
        .executableTarget(
            name: "hearth-storage-stress", dependencies: ["HomeStorage", "HomeCore", pluginKit],
            swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib"])]),
        .executableTarget(
            name: "hearth-storage-bench", dependencies: ["HomeStorage", "HomeCore", pluginKit],
            swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib"])]),
        // Prints what isolated plugin mode costs (docs/BENCHMARKS.md).
        .executableTarget(
            name: "hearth-plugin-bench", dependencies: ["PluginHost", "HomeCore", pluginKit, logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            path: "Benchmarks/PluginHostBench", swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib"])]),
        // Prints API figures (docs/BENCHMARKS.md); loopback only.
        .executableTarget(
            name: "hearth-api-bench",
            dependencies: ["HearthServer", "HearthClient", "HearthAPI", "HomeStorage", "HomeCore", pluginKit, grdb, logging],
            swiftSettings: settings),
        // Regenerates Plugins/PluginKit/Sources/HomeModel/Generated from catalog/matter.json.
        .executableTarget(name: "hearth-catalog-gen", path: "Sources/hearth-catalog-gen", swiftSettings: settings),

        .target(
            name: "DemoPlugin", dependencies: [pluginKit], path: "Plugins/Demo", swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../.."])]),
        // libmosquitto (Debian's libmosquitto-dev), for the MQTT plugin.
        .systemLibrary(
            name: "CMosquitto", path: "Plugins/CMosquitto", pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]),
        .target(
            name: "MQTTPlugin", dependencies: [pluginKit, "CMosquitto"], path: "Plugins/MQTT", swiftSettings: settings,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../.."])]),
        // Broker → core throughput and latency of the MQTT plugin against a plain subscriber.
        .executableTarget(
            name: "mqtt-benchmark", dependencies: ["MQTTPlugin", "HomeCore", pluginKit, logging],
            path: "Benchmarks/MQTTBenchmark", exclude: ["thread-cpu.sh"], swiftSettings: settings),
        // mqtt-fuzz and its engine (the MQTT tests run a short fuzz through the same engine).
        .target(
            name: "MQTTFuzz", dependencies: ["MQTTPlugin", "PluginHost", pluginKit], path: "Benchmarks/MQTTFuzz/Kit",
            swiftSettings: settings),
        .executableTarget(name: "mqtt-fuzz", dependencies: ["MQTTFuzz"], path: "Benchmarks/MQTTFuzz/Main", swiftSettings: settings),
        // The GPIO plugin: libgpiod behind a narrow C shim (CShim: it dlopens libgpiod 2 or 1.6
        // at run time, so nothing links libgpiod), the driver itself (Kit: backends,
        // configuration, state machines; tests link it directly), and the .so's entry points (Plugin).
        .target(
            name: "CHearthGPIO", path: "Plugins/GPIO/CShim",
            linkerSettings: [.linkedLibrary("dl")]),
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
        .target(
            name: "WrongCompilerPlugin", dependencies: [pluginKit], path: "Tests/Fixtures/WrongCompilerPlugin",
            swiftSettings: settings),
        .target(name: "NoSymbolsPlugin", path: "Tests/Fixtures/NoSymbolsPlugin", swiftSettings: settings),
        .target(
            name: "DuplicateIDPlugin", dependencies: [pluginKit], path: "Tests/Fixtures/DuplicateIDPlugin",
            swiftSettings: settings),
        .target(name: "FlakyPlugin", dependencies: [pluginKit], path: "Tests/Fixtures/FlakyPlugin", swiftSettings: settings),
        .target(
            name: "CrashingPlugin", dependencies: [pluginKit], path: "Tests/Fixtures/CrashingPlugin", swiftSettings: settings),

        // Benchmarks print figures (docs/BENCHMARKS.md); they are not tests.
        .executableTarget(
            name: "core-benchmark",
            dependencies: [
                "HomeCore", pluginKit, .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Benchmarks/CoreBenchmark",
            exclude: ["summarise.py"],
            swiftSettings: settings),
        // Starter evaluation of the automation engine (issue 18): docs/BENCHMARKS.md.
        .executableTarget(
            name: "automation-benchmark",
            dependencies: ["HomeAutomation", "HomeCore", "GPIOKit", "MQTTPlugin", pluginKit, logging],
            path: "Benchmarks/AutomationBenchmark",
            swiftSettings: settings),

        // Matter protocol foundations (issue 16): Matter TLV (Appendix A of the Core Specification),
        // no dependencies; a deterministic fuzzer for its decoder (library, so tests can run it too).
        .target(name: "MatterTLV", swiftSettings: settings),
        .target(name: "MatterTLVFuzz", dependencies: ["MatterTLV"], swiftSettings: settings),
        .executableTarget(name: "matter-tlv-fuzz", dependencies: ["MatterTLV", "MatterTLVFuzz"], swiftSettings: settings),
        // PASE and CASE handshake times (docs/BENCHMARKS.md).
        .executableTarget(
            name: "matter-security-bench",
            dependencies: ["MatterSecurity", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/MatterSecurityBench", swiftSettings: settings),
        // Onboarding payloads, SPAKE2+/PASE, operational certificates (TLV <-> X.509), CASE.
        .target(
            name: "MatterSecurity",
            dependencies: [
                "MatterTLV",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: settings),
        // Matter messages: headers, AES-CCM (through swift-crypto's vendored BoringSSL), privacy,
        // counters and replay windows, sessions, exchanges, MRP; a thin UDP owner.
        .target(
            name: "MatterMessaging",
            dependencies: ["MatterTLV", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: settings),
        // A deterministic fuzzer for message headers, secured/unsecured messages and the PASE/CASE
        // decoders and state machines (library, so tests can run it too).
        .target(
            name: "MatterProtocolFuzz",
            dependencies: ["MatterMessaging", "MatterSecurity", "MatterTLV", "MatterTLVFuzz"],
            swiftSettings: settings),
        .executableTarget(name: "matter-protocol-fuzz", dependencies: ["MatterProtocolFuzz", "MatterTLVFuzz"], swiftSettings: settings),
        // Prints message encrypt+decrypt and TLV throughput (docs/BENCHMARKS.md).
        .executableTarget(name: "matter-bench", dependencies: ["MatterTLV", "MatterMessaging"], swiftSettings: settings),
        // The Interaction Model (chapter 10): IM message codecs, the data model protocol, the IM
        // engine (read/write/invoke/subscribe, chunking, timed interactions), root/bridge clusters.
        .target(name: "MatterInteraction", dependencies: ["MatterTLV", "MatterMessaging", pluginKit], swiftSettings: settings),
        // A PASE responder on UDP for the real CHIP controller (scripts/test-matter-controller).
        .executableTarget(
            name: "matter-test-responder",
            dependencies: [
                "MatterSecurity", "MatterMessaging", "MatterTLV", "MatterCommissioning", "MatterInteraction", "HAP", pluginKit,
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings),

        // Commissioning (issue 21): fabric table, fail-safe, the General Commissioning, Operational
        // Credentials and Administrator Commissioning commands' logic, ACL checks, DNS-SD records.
        .target(
            name: "MatterCommissioning",
            dependencies: ["MatterSecurity", "MatterTLV", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: settings),
        .testTarget(
            name: "MatterCommissioningTests",
            dependencies: [
                "MatterCommissioning", "MatterSecurity", "MatterTLV", "HomeStorage", "HAP", grdb, logging,
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings),

        // The Matter bridge service (issue 21 part A): one node on UDP, PASE/CASE session
        // manager, root-node clusters on the commissioning state, the Aggregator, DNS-SD.
        .target(
            name: "MatterBridge",
            dependencies: [
                "MatterMessaging", "MatterSecurity", "MatterInteraction", "MatterCommissioning", "MatterTLV", "HomeStorage", logging,
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings),
        .testTarget(
            name: "MatterBridgeTests",
            dependencies: [
                "MatterBridge", "MatterMessaging", "MatterSecurity", "MatterInteraction", "MatterCommissioning", "MatterTLV", "MatterTLVFuzz",
                "HomeStorage", logging, .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings),

        // What several test targets share: a real mosquitto on a free loopback port.
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: settings),

        .testTarget(name: "MatterTLVTests", dependencies: ["MatterTLV", "MatterTLVFuzz"], swiftSettings: settings),
        .testTarget(
            name: "MatterSecurityTests",
            dependencies: [
                "MatterSecurity", "MatterTLV", "MatterProtocolFuzz",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: settings),
        .testTarget(name: "MatterMessagingTests", dependencies: ["MatterMessaging", "MatterTLV"], swiftSettings: settings),
        .testTarget(
            name: "MatterInteractionTests", dependencies: ["MatterInteraction", "MatterMessaging", "MatterTLV", "MatterTLVFuzz", pluginKit],
            swiftSettings: settings),
        .testTarget(name: "HomeModelTests", dependencies: [pluginKit], swiftSettings: settings),
        .testTarget(name: "DriverTestingTests", dependencies: [pluginKit, driverTesting], swiftSettings: settings),
        .testTarget(
            name: "HomeStorageTests",
            dependencies: [
                "HomeStorage", "HomeCore", pluginKit, driverTesting,
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HashTreeCollections", package: "swift-collections"),
            ],
            swiftSettings: settings),
        .testTarget(
            name: "GPIOPluginTests", dependencies: ["GPIOKit", "HomeCore", "HomeAutomation", "PluginHost", "TestSupport", pluginKit, driverTesting],
            swiftSettings: settings),
        .testTarget(
            name: "HomeCoreTests",
            dependencies: ["HomeCore", pluginKit, .product(name: "Prometheus", package: "swift-prometheus"), .product(name: "HashTreeCollections", package: "swift-collections")],
            swiftSettings: settings),
        .testTarget(
            name: "HomeAutomationTests",
            dependencies: [
                "HomeAutomation", "HomeCore", "HomeStorage", "HearthConfiguration", "GPIOKit", "MQTTPlugin", "MQTTExport", "TestSupport", pluginKit, driverTesting,
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: settings),
        .testTarget(
            name: "HomeCombineTests",
            dependencies: ["HomeCombine", "HomeCore", pluginKit, .product(name: "OpenCombine", package: "OpenCombine")],
            swiftSettings: settings),
        .testTarget(
            name: "PluginHostTests",
            dependencies: [
                "PluginHost", "HomeCore", "HomeStorage", "TestSupport", pluginKit, driverTesting, logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: settings),
        .testTarget(
            name: "HearthServerTests",
            dependencies: [
                "HearthServer", "HearthClient", "HearthAPI", "HAPBridge", "HomeStorage", "HomeCore", "HomeAutomation", "HomeCombine", "TestSupport", pluginKit, driverTesting, grdb, logging,
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: settings),
        // Install layout, the .deb, systemd notify, `hearth doctor`: they run the built binaries
        // and scripts as child processes (so `swift build --build-tests` must have built them).
        .testTarget(name: "OpsTests", dependencies: ["TestSupport"], swiftSettings: settings),
        .testTarget(
            name: "MQTTPluginTests", dependencies: ["MQTTPlugin", "MQTTFuzz", "HomeCore", "PluginHost", "TestSupport", pluginKit, driverTesting, logging],
            exclude: ["Fixtures"], swiftSettings: settings),
        // MQTT export (issue 19): Home Assistant discovery out, commands in, over libmosquitto.
        .target(
            name: "MQTTExport",
            dependencies: [
                "HomeCore", pluginKit, "CMosquitto", logging, metrics,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HashTreeCollections", package: "swift-collections"),
            ],
            swiftSettings: settings),
        // GPIO-style edge on exporting Hearths → observer on an importing Hearth through mosquitto,
        // and the exporter's message rate against a plain publisher (docs/BENCHMARKS.md, issue 19).
        .executableTarget(
            name: "mqtt-export-benchmark", dependencies: ["MQTTExport", "HomeCore", "PluginHost", "TestSupport", pluginKit, logging],
            path: "Benchmarks/MQTTExportBenchmark", swiftSettings: settings),
        .testTarget(
            name: "MQTTExportTests",
            dependencies: [
                "MQTTExport", "HomeCore", "HearthConfiguration", "HearthClient", "HearthAPI", "PluginHost", "TestSupport", pluginKit, logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HashTreeCollections", package: "swift-collections"),
            ],
            swiftSettings: settings),
        // HAP (issue 20): TLV8, SRP-6a, pair-setup/verify, encrypted framing, the HTTP server
        // on SwiftNIO. Knows nothing of the home.
        .target(
            name: "HAP",
            dependencies: [
                logging, .product(name: "Crypto", package: "swift-crypto"), .product(name: "BigInt", package: "BigInt"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: settings),
        // The HAP bridge: the home mapped to HAP accessories, its SQLite state, the avahi advertiser.
        .target(
            name: "HAPBridge",
            dependencies: [
                "HAP", "HearthAPI", "HomeCore", pluginKit, logging, grdb, .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HashTreeCollections", package: "swift-collections"),
            ],
            swiftSettings: settings),
        .testTarget(
            name: "HAPBridgeTests",
            dependencies: ["HAPBridge", "HAP", "HomeCore", pluginKit, .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: settings),
        // The home's exposed devices as bridged endpoints of a Matter node (issue 21, part B).
        .target(
            name: "MatterHomeModel",
            dependencies: ["HomeCore", "HomeStorage", "MatterInteraction", "MatterTLV", pluginKit, logging],
            swiftSettings: settings),
        .testTarget(
            name: "MatterHomeModelTests",
            dependencies: ["MatterHomeModel", "MatterInteraction", "MatterMessaging", "MatterTLV", "HomeCore", "HomeStorage", pluginKit],
            swiftSettings: settings),
        .testTarget(
            name: "HAPTests",
            dependencies: ["HAP", logging, .product(name: "Crypto", package: "swift-crypto"), .product(name: "BigInt", package: "BigInt")],
            swiftSettings: settings),
    ],
    swiftLanguageModes: [.v6]
)
