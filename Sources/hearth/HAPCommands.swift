import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// The HomeKit bridges through the API (admins): setup codes, QR codes, pairings, unpairing.
// ('hearth hap' reads the bridges' state files instead, without a running hearthd.)

extension ExposureCommand {
    static func render(_ hap: WireHAP, qr: Bool) -> String {
        guard !hap.bridges.isEmpty else { return "No HomeKit bridge running (hap.enabled in hearth.yaml)." }
        var lines: [String] = []
        for b in hap.bridges {
            lines.append("Bridge \(b.number): \(b.name)   port \(b.port)   accessories \(b.accessories)   c# \(b.configurationNumber)")
            lines.append("  setup code: \(b.setupCode)   setup URI: \(b.setupURI)   pairing ID: \(b.pairingID)")
            let paired = b.pairings.map { $0.identifier + ($0.admin ? " (admin)" : "") }
            lines.append("  pairings: " + (paired.isEmpty ? "none (ready to add in the Home app)" : paired.joined(separator: ", ")))
            if qr { lines.append(WireHAPBridge.terminalQR(b.setupQR)) }
        }
        return lines.joined(separator: "\n")
    }

    struct HAP: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hap", abstract: "The HomeKit bridges: setup codes, X-HM:// setup URIs, pairings (admins).")
        @OptionGroup var options: ClientOptions
        @Flag(help: "Print each bridge's setup QR code.") var qr = false
        func run() async throws {
            let hap = try await options.home().hapBridges()
            try options.output(hap, ExposureCommand.render(hap, qr: qr))
        }
    }

    struct HAPUnpair: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hap-unpair", abstract: "Remove every pairing of a HomeKit bridge: it can be added to Home again (admins).")
        @OptionGroup var options: ClientOptions
        @Argument(help: "The bridge: 1 for the first, 2 for the one past 149 devices.") var bridge: Int = 1
        func run() async throws {
            let hap = try await options.home().unpairHAP(bridge: bridge)
            try options.output(hap, ExposureCommand.render(hap, qr: false))
        }
    }
}
