import ArgumentParser
import Foundation
import HAP
import HAPBridge
import HearthAPI
import HearthConfiguration

/// `hearthd hap`: the HomeKit bridge's setup code, X-HM:// setup URI (what the QR code
/// carries) and pairings, read from its state file; unpairing everyone; resetting the counter
/// of unsuccessful pair-setup attempts.
struct HAPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hap",
        abstract: "Show the HomeKit bridges' setup codes and pairings; unpair; reset the attempt counter.",
        discussion: "Reads the state file hap.state names (default: hap.sqlite beside the database). Restart hearthd after --unpair-all.")

    @Option(name: .shortAndLong, help: "The configuration file.")
    var config: String = "etc/hearth.yaml"

    @Option(help: "The HAP state file (overrides the configuration).")
    var state: String?

    @Flag(help: "Remove every pairing (the bridge can be added to Home again). With hearthd running, use 'hearth exposure hap-unpair' instead.")
    var unpairAll = false

    @Flag(help: "Reset the unsuccessful pair-setup attempts (after 100 the bridge refuses pair-setup).")
    var resetAttempts = false

    @Option(help: "The bridge --unpair-all and --reset-attempts act on (1 = the first; a second one runs past 149 devices).")
    var bridge: Int = 1

    @Flag(help: "Print each bridge's setup QR code.")
    var qr = false

    func run() throws {
        let path: String
        if let state {
            path = state
        } else {
            do {
                path = try HearthConfig.load(path: config).hapStatePath
            } catch {
                FileHandle.standardError.write(Data("hearth: \(error)\n".utf8))
                throw ExitCode(65)
            }
        }
        guard FileManager.default.fileExists(atPath: path) else {
            FileHandle.standardError.write(Data("hearth: \(path): no HAP state yet (turn on hap: in hearth.yaml and start hearthd)\n".utf8))
            throw ExitCode(66)
        }
        // The first bridge's file, then those of the bridges past 149 devices (hap-2.sqlite, …).
        let files = [(0, path)] + HAPStateStore.extraBridgePaths(first: path)
        guard files.contains(where: { $0.0 + 1 == bridge }) else {
            FileHandle.standardError.write(Data("hearth: no HomeKit bridge \(bridge) (\(files.count) in \(path)'s folder)\n".utf8))
            throw ExitCode(64)
        }
        for (index, file) in files {
            let store = try HAPStateStore(path: file)
            let identity = try store.identity()
            if index + 1 == bridge {
                if unpairAll {
                    for p in try store.loadPairings() { try store.removePairing(identifier: p.identifier) }
                    print("bridge \(bridge): removed every pairing; restart hearthd")
                }
                if resetAttempts {
                    try store.saveFailedAttempts(0)
                    print("bridge \(bridge): unsuccessful pair-setup attempts reset")
                }
            }
            let pairings = try store.loadPairings()
            let attempts = try store.loadFailedAttempts()
            if files.count > 1 { print("bridge \(index + 1) (\(file)):") }
            print("setup code:  \(identity.setupCode)")
            print("setup URI:   \(identity.setupURI(category: 2))")
            print("pairing ID:  \(identity.pairingID)")
            print("attempts:    \(attempts) unsuccessful (refused from \(PairingServer.maxAttempts))")
            print("pairings:    \(pairings.isEmpty ? "none (ready to add in the Home app)" : String(pairings.count))")
            for p in pairings { print("  \(p.identifier)\(p.isAdmin ? " (admin)" : "")") }
            if qr, let code = try? QRCode(identity.setupURI(category: 2)) { print(WireHAPBridge.terminalQR(code.rows)) }
        }
    }
}
