import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

@main
struct Hearth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "The Hearth command line.",
        discussion: "Sign in first (hearth login --url http://127.0.0.1:8080 --username NAME); every command takes --json.",
        subcommands: [
            DevicesCommand.self, DeviceCommand.self, RoomsCommand.self, StructuresCommand.self, DiscoveredCommand.self,
            CommissionCommand.self, InvokeCommand.self, SetCommand.self, WatchCommand.self, UsersCommand.self, GrantsCommand.self,
            LoginCommand.self, LogoutCommand.self, PasswdCommand.self, SetupCommand.self, PluginsCommand.self, CatalogCommand.self,
            DoctorHandOver.self, BackupHandOver.self, RestoreHandOver.self, RestoreOnStartHandOver.self, HAPHandOver.self, MatterCommand.self, ReloadCommand.self, ExposureCommand.self,
            ScenesCommand.self, AutomationsCommand.self,
        ])
}

/// `hearth catalog`: every device type and trait Hearth knows, with IDs, attributes,
/// commands and events — the signed-in hearthd's running catalogue (with the vendor traits its
/// plugins declared), or the built-in standard one with `--offline` or when not signed in.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog", abstract: "Print the catalogue of device types and traits.")

    @Option(help: "hearthd's URL (default: the signed-in session's).")
    var url: String?

    @Flag(help: "Print JSON (the whole catalogue, for scripts).")
    var json = false

    @Flag(help: "Print the built-in standard catalogue without asking hearthd (no vendor traits).")
    var offline = false

    struct Output: Encodable {
        let deviceTypes: [DeviceTypeDescriptor]
        let traits: [TraitDescriptor]
    }

    func run() async throws {
        var deviceTypes = Catalog.standard.sortedDeviceTypes
        var traits = Catalog.standard.sortedTraits
        if !offline, let stored = try? FileSessionStore.standard().load() {
            var options = ClientOptions()
            options.url = url ?? stored.url
            let wire = try await options.home().catalog()
            deviceTypes = wire.deviceTypes
            traits = wire.traits
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(Output(deviceTypes: deviceTypes, traits: traits))
            print(String(decoding: data, as: UTF8.self))
            return
        }
        let names = Dictionary(traits.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        print("Device types")
        for t in deviceTypes {
            let required = t.requiredTraits.map { names[$0] ?? $0.hex }.joined(separator: ", ")
            print("  \(t.id.hex)  \(t.name.padding(toLength: 26, withPad: " ", startingAt: 0)) requires: \(required)")
        }
        print("\nTraits")
        for t in traits {
            print(
                "  \(t.id.hex)  \(t.name.padding(toLength: 34, withPad: " ", startingAt: 0)) "
                    + "\(t.attributes.count) attributes, \(t.commands.count) commands, \(t.events.count) events")
        }
        let vendor = traits.filter(\.isVendor)
        if !vendor.isEmpty { print("\nVendor traits (declared by plugins)") }
        for t in vendor {
            print("  \(t.id.hex)  \(t.qualifiedName)")
            for a in t.attributes {
                print("      \(a.swiftName): \(a.type.rawValue)" + (a.allowedRange.map { " \($0.lowerBound)…\($0.upperBound)" } ?? "") + (a.unit.map { " \($0)" } ?? ""))
            }
            for c in t.commands { print("      \(c.swiftName)(" + c.fields.map(\.swiftName).joined(separator: ", ") + ")") }
            for e in t.events { print("      event \(e.name)") }
        }
    }
}
