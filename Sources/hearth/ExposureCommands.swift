import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// What leaves the house (admins): one setting for MQTT export and the Matter and HAP bridges.

struct ExposureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exposure", abstract: "Show or change which devices leave the house (MQTT export, bridges; admins).",
        subcommands: [Show.self, SetPolicy.self, Reset.self, HAP.self, HAPUnpair.self], defaultSubcommand: Show.self)

    static func render(_ e: WireExposure) -> String {
        let p = e.policy
        func list(_ l: [String]?) -> String { (l ?? []).isEmpty ? "-" : (l ?? []).joined(separator: ", ") }
        var lines = [
            "Doors: \(e.doors.isEmpty ? "none on (exposure.mqtt in hearth.yaml)" : e.doors.joined(separator: ", "))",
            "Policy from: \(e.source == .admin ? "an admin's edit (hearth exposure reset returns to hearth.yaml's)" : "hearth.yaml")",
            "Rooms: \(list(p.rooms))   Types: \(list(p.deviceTypes))   Devices: \(list(p.devices))",
            "Excluded rooms: \(list(p.excludedRooms))   types: \(list(p.excludedDeviceTypes))   devices: \(list(p.excludedDevices))",
            "Sensitive devices: \(p.includeSensitive == true ? "all selected" : "only those listed by ID")   Control: \(p.allowControl == false ? "read only" : "allowed")",
            "",
        ]
        let rows = e.devices.map { [$0.id, $0.name, $0.verdict.rawValue] }
        lines.append(table(["DEVICE", "NAME", "VERDICT"], rows))
        return lines.joined(separator: "\n")
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The policy, where it comes from, and the verdict on each device.")
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let e = try await options.home().exposure()
            try options.output(e, ExposureCommand.render(e))
        }
    }

    struct SetPolicy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Replace the policy: nothing listed exposes every non-sensitive device.",
            discussion: "Example: hearth exposure set --room Garage --device gpio:front-lock --exclude-type 0x0302")
        @OptionGroup var options: ClientOptions
        @Option(name: .customLong("room"), help: "Select a room (name or ID); repeatable.") var rooms: [String] = []
        @Option(name: .customLong("type"), help: "Select a device type (name or 0x hex); repeatable.") var types: [String] = []
        @Option(name: .customLong("device"), help: "Select a device by ID (opts a lock in); repeatable.") var devices: [String] = []
        @Option(name: .customLong("exclude-room"), help: "Never expose this room.") var excludedRooms: [String] = []
        @Option(name: .customLong("exclude-type"), help: "Never expose this device type.") var excludedTypes: [String] = []
        @Option(name: .customLong("exclude-device"), help: "Never expose this device.") var excludedDevices: [String] = []
        @Flag(help: "Expose every selected sensitive device (locks, garage doors, alarms).") var includeSensitive = false
        @Flag(help: "Controllers outside may read and observe only.") var readOnly = false
        func run() async throws {
            let e = try await options.home().setExposure(WireExposurePolicy(
                rooms: rooms, deviceTypes: types, devices: devices, excludedRooms: excludedRooms, excludedDeviceTypes: excludedTypes,
                excludedDevices: excludedDevices, includeSensitive: includeSensitive, allowControl: !readOnly))
            try options.output(e, ExposureCommand.render(e))
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget the admin's policy: hearth.yaml's applies again.")
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let e = try await options.home().resetExposure()
            try options.output(e, ExposureCommand.render(e))
        }
    }
}
