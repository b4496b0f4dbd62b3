import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// Devices: list, discovered, one device (show, rename, move).

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List the devices you may see.")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        let home = try options.home()
        let devices: [WireDevice] = try await home.connection.send("GET", "devices")
        if options.json { return try options.print(json: devices) }
        let rooms = Dictionary(try await home.rooms().list().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        print(
            table(
                ["ID", "NAME", "ROOM", "TYPE", "CONNECTIVITY", "STATE"],
                devices.map {
                    [$0.id.rawValue, $0.name, $0.roomID.flatMap { rooms[$0] } ?? "-", $0.typeName, $0.sourceConnectivity.connectivityState.rawValue, $0.stateSummary]
                }))
    }
}

struct DiscoveredCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "discovered", abstract: "List devices waiting to be commissioned (admins).")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        let devices: [WireDevice] = try await options.home().connection.send("GET", "discovered")
        try options.output(devices, columns: ["ID", "NAME", "TYPE", "MANUFACTURER", "MODEL"]) { [$0.id.rawValue, $0.name, $0.typeName, $0.manufacturer ?? "-", $0.model ?? "-"] }
    }
}

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Show, rename or move one device ('hearth device ID' shows it).",
        subcommands: [Show.self, Rename.self, Move.self], defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a device: its state in human units, then types, traits and attributes in spec units.")
        @OptionGroup var options: ClientOptions
        @Argument(help: "The device ID (plugin:local).") var id: String

        func run() async throws {
            let d: WireDevice = try await options.home().connection.send("GET", "devices/\(id)")
            if options.json { return try options.print(json: d) }
            print("\(d.name)  (\(d.id))")
            print("  commissioning: \(d.commissioning.rawValue)   room: \(d.roomID?.rawValue ?? "-")   structure: \(d.structureID?.rawValue ?? "-")")
            print("  connectivity: \(d.sourceConnectivity.connectivityState.rawValue), \(d.sourceConnectivity.dataSourceLocality.rawValue)")
            if !d.readings.isEmpty { print("  state: \(d.stateSummary)") }
            for t in d.types {
                print("  \(t.name ?? t.id.hex) \(t.id.hex)\(t.isPrimaryType ? "  [primary]" : "")")
                for trait in t.traits {
                    print("    \(trait.name ?? trait.id.hex) \(trait.id.hex)  \(trait.sourceConnectivity.connectivityState.rawValue)")
                    for a in trait.attributes {
                        print("      \(a.name ?? a.id.hex) = \(a.value)\(a.unit.map { " (\($0))" } ?? "")")
                    }
                }
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a device (admins; naming rules apply).")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        @Argument var name: String

        func run() async throws {
            let d = try await options.home().update(device: DeviceID(rawValue: id), DevicePatchRequest(name: name))
            try options.output(d, "Renamed \(d.id) to '\(d.name)'.")
        }
    }

    struct Move: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a device into a room, or out of its room with --none (admins).")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        @Argument(help: "The room ID.") var room: String?
        @Flag(help: "Take the device out of its room.") var none = false

        func validate() throws {
            guard (room == nil) == none else { throw ValidationError("give a room ID or --none") }
        }

        func run() async throws {
            let d = try await options.home().move(device: DeviceID(rawValue: id), to: room.map { RoomID(rawValue: $0) })
            try options.output(d, "Moved \(d.id) to \(d.roomID?.rawValue ?? "no room").")
        }
    }
}
