import ArgumentParser
import Foundation
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
            DoctorHandOver.self, BackupHandOver.self, RestoreHandOver.self, RestoreOnStartHandOver.self, HAPHandOver.self, ExposureCommand.self,
        ])
}

/// `hearth catalog`: every device type and trait Hearth knows, with IDs, attributes,
/// commands and events.
struct CatalogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog", abstract: "Print the catalogue of device types and traits.")

    @Flag(help: "Print JSON (the whole catalogue, for scripts).")
    var json = false

    struct Output: Encodable {
        let deviceTypes: [DeviceTypeDescriptor]
        let traits: [TraitDescriptor]
    }

    func run() throws {
        let catalog = Catalog.standard
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(Output(deviceTypes: catalog.sortedDeviceTypes, traits: catalog.sortedTraits))
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print("Device types")
        for t in catalog.sortedDeviceTypes {
            let traits = t.requiredTraits.map { catalog.trait($0)?.name ?? $0.hex }.joined(separator: ", ")
            print("  \(t.id.hex)  \(t.name.padding(toLength: 26, withPad: " ", startingAt: 0)) requires: \(traits)")
        }
        print("\nTraits")
        for t in catalog.sortedTraits {
            print(
                "  \(t.id.hex)  \(t.name.padding(toLength: 34, withPad: " ", startingAt: 0)) "
                    + "\(t.attributes.count) attributes, \(t.commands.count) commands, \(t.events.count) events")
        }
    }
}
