import ArgumentParser
import Foundation
import HAP
import HAPBridge
import HearthConfiguration

/// `hearthd hap`: the HomeKit bridge's setup code, X-HM:// setup URI (what the QR code
/// carries) and pairings, read from its state file; unpairing everyone; resetting the counter
/// of unsuccessful pair-setup attempts.
struct HAPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hap",
        abstract: "Show the HomeKit bridge's setup code and pairings; unpair; reset the attempt counter.",
        discussion: "Reads the state file hap.state names (default: hap.sqlite beside the database). Restart hearthd after --unpair-all.")

    @Option(name: .shortAndLong, help: "The configuration file.")
    var config: String = "etc/hearth.yaml"

    @Option(help: "The HAP state file (overrides the configuration).")
    var state: String?

    @Flag(help: "Remove every pairing (the bridge can be added to Home again).")
    var unpairAll = false

    @Flag(help: "Reset the unsuccessful pair-setup attempts (after 100 the bridge refuses pair-setup).")
    var resetAttempts = false

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
        let store = try HAPStateStore(path: path)
        let identity = try store.identity()
        if unpairAll {
            for p in try store.loadPairings() { try store.removePairing(identifier: p.identifier) }
            print("removed every pairing; restart hearthd")
        }
        if resetAttempts {
            try store.saveFailedAttempts(0)
            print("unsuccessful pair-setup attempts reset")
        }
        let pairings = try store.loadPairings()
        let attempts = try store.loadFailedAttempts()
        print("setup code:  \(identity.setupCode)")
        print("setup URI:   \(identity.setupURI(category: 2))")
        print("pairing ID:  \(identity.pairingID)")
        print("attempts:    \(attempts) unsuccessful (refused from \(PairingServer.maxAttempts))")
        print("pairings:    \(pairings.isEmpty ? "none (ready to add in the Home app)" : String(pairings.count))")
        for p in pairings { print("  \(p.identifier)\(p.isAdmin ? " (admin)" : "")") }
    }
}
