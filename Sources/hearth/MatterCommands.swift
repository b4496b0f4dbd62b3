import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// The Matter bridge through the API (admins): pairing code, QR payload, window, fabrics.
struct MatterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matter", abstract: "The Matter bridge: pairing code, QR payload, commissioning window, fabrics (admins).",
        subcommands: [Show.self, OpenWindow.self, RemoveFabric.self], defaultSubcommand: Show.self)

    static func render(_ m: WireMatter) -> String {
        var lines = [
            "Manual pairing code: \(m.manualPairingCode)",
            "QR payload:          \(m.qrPayload)",
            "Discriminator \(m.discriminator)   UDP port \(m.port)",
            "Commissioning window: \(m.window)" + (m.windowSecondsLeft.map { " (\($0) s left)" } ?? ""),
        ]
        if let problem = m.advertisingProblem { lines.append("Not discoverable: \(problem)") }
        lines.append(m.fabrics.isEmpty ? "Fabrics: none (not commissioned yet)" : "Fabrics:")
        for f in m.fabrics {
            lines.append("  \(f.index): fabric 0x\(f.fabricID)  node 0x\(f.nodeID)  vendor 0x\(String(f.vendorID, radix: 16, uppercase: true))"
                         + (f.label.isEmpty ? "" : "  '\(f.label)'"))
        }
        return lines.joined(separator: "\n")
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "The pairing code, QR payload, window and fabrics.")
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let m = try await options.home().matterBridge()
            try options.output(m, MatterCommand.render(m))
        }
    }

    struct OpenWindow: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "open-window", abstract: "Open a commissioning window (15 minutes) so another controller can add the bridge.")
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let m = try await options.home().openMatterWindow()
            try options.output(m, MatterCommand.render(m))
        }
    }

    struct RemoveFabric: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-fabric", abstract: "Remove a fabric: that controller loses the bridge.")
        @OptionGroup var options: ClientOptions
        @Argument(help: "The fabric index ('hearth matter show' lists them).") var index: Int
        func run() async throws {
            let m = try await options.home().removeMatterFabric(index)
            try options.output(m, MatterCommand.render(m))
        }
    }
}
