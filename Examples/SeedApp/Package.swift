// swift-tools-version: 6.1
import Foundation
import PackageDescription

// A seed-style app: it depends on Hearth the way an app outside this repository would — on the
// `HearthClient` and `HomeCombine` library products — not on its sources. The tests build it
// (`swift build --package-path Examples/SeedApp`) and run it against a real server.
//
// A local package's identity is its folder's name, so the root's is read from this file's path.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let hearth = root.lastPathComponent

let package = Package(
    name: "SeedApp",
    dependencies: [
        .package(path: "../.."),
        .package(path: "../../Plugins/PluginKit"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "SeedApp",
            dependencies: [
                .product(name: "HearthClient", package: hearth),
                .product(name: "HomeCombine", package: hearth),
                .product(name: "PluginKit", package: "PluginKit"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
