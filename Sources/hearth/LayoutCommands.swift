import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// The layout: rooms and structures.

struct RoomsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms", abstract: "List, add, rename or remove rooms.",
        subcommands: [List.self, Add.self, Rename.self, Remove.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let rooms = try await options.home().rooms().list()
            try options.output(rooms, columns: ["ID", "NAME", "STRUCTURE"]) { [$0.id.rawValue, $0.name, $0.structureID.rawValue] }
        }
    }
    struct Add: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var name: String
        @Option(help: "The structure ID.") var structure: String
        func run() async throws {
            let r = try await options.home().createRoom(named: name, in: StructureID(rawValue: structure))
            try options.output(r, "Added room '\(r.name)' (\(r.id)).")
        }
    }
    struct Rename: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        @Argument var name: String
        func run() async throws {
            let r = try await options.home().renameRoom(RoomID(rawValue: id), to: name)
            try options.output(r, "Renamed room \(r.id) to '\(r.name)'.")
        }
    }
    struct Remove: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            try await options.home().deleteRoom(RoomID(rawValue: id))
            options.say("Removed room \(id); its devices stay in the structure.")
        }
    }
}

struct StructuresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "structures", abstract: "List, add, rename or remove structures.",
        subcommands: [List.self, Add.self, Rename.self, Remove.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let s = try await options.home().structures().list()
            try options.output(s, columns: ["ID", "NAME"]) { [$0.id.rawValue, $0.name] }
        }
    }
    struct Add: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var name: String
        func run() async throws {
            let s = try await options.home().createStructure(named: name)
            try options.output(s, "Added structure '\(s.name)' (\(s.id)).")
        }
    }
    struct Rename: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        @Argument var name: String
        func run() async throws {
            let s = try await options.home().renameStructure(StructureID(rawValue: id), to: name)
            try options.output(s, "Renamed structure \(s.id) to '\(s.name)'.")
        }
    }
    struct Remove: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            try await options.home().deleteStructure(StructureID(rawValue: id))
            options.say("Removed structure \(id); its devices are back in the discovered list.")
        }
    }
}
