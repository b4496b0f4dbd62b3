import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// App requests and grants (admins).

struct GrantsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grants", abstract: "App access: pending requests and permission changes, approve, deny, list, revoke (admins).",
        subcommands: [List.self, Pending.self, Changes.self, Approve.self, Edit.self, Deny.self, Revoke.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Live app grants.")
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let grants = try await options.home().grants()
            try options.output(grants, columns: ["GRANT", "APP", "DEVICE TYPES", "SENSITIVE", "CONTROL"]) { [$0.id, $0.appName, GrantsCommand.types($0.scope.deviceTypes), $0.scope.includeSensitive ? "yes" : "no", $0.scope.canControl ? "yes" : "read only"] }
        }
    }
    struct Pending: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "App requests waiting for a decision.")
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let requests = try await options.home().appRequests(pendingOnly: true)
            try options.output(requests, columns: ["REQUEST", "APP", "ASKS FOR", "WANTS TO AUTOMATE"]) {
                [$0.id, $0.appName, GrantsCommand.types($0.requestedDeviceTypes.isEmpty ? nil : $0.requestedDeviceTypes),
                 ($0.requestedAutomationTypes ?? []).map { "\($0.deviceType.hex):\($0.trait.hex)" }.joined(separator: ", ")]
            }
        }
    }
    struct Changes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Permission changes apps with a grant asked for (approve or deny them by their chg-… ID).")
        @OptionGroup var options: ClientOptions
        @Flag(help: "Every change, decided ones too.") var all = false
        func run() async throws {
            let changes = try await options.home().grantChanges(pendingOnly: !all)
            try options.output(changes, columns: ["CHANGE", "APP", "GRANT", "ASKS FOR", "STATUS"]) {
                [$0.id, $0.appName, $0.grantID, GrantsCommand.types($0.requestedDeviceTypes.isEmpty ? nil : $0.requestedDeviceTypes), $0.status.rawValue]
            }
        }
    }
    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve an app request (req-…) or a permission change (chg-…), choosing what the app may see.")
        @OptionGroup var options: ClientOptions
        @Argument var request: String
        @Option(name: .customLong("device-type"), help: "A device type to allow (name or 0x… ID); repeat. Default: what the app asked for.")
        var deviceTypes: [String] = []
        @Flag(help: "Include sensitive devices (locks, garage doors, alarms).") var includeSensitive = false
        @Option(name: .customLong("sensitive-device"), help: "One sensitive device to show the app (ID, e.g. mqtt:front-door-lock); repeat.")
        var sensitiveDevices: [String] = []
        @Flag(help: "Read and observe only, no commands.") var readOnly = false
        @Option(name: .customLong("automate"), help: "A device type and trait the app may automate (OnOffLight:OnOff); repeat. Default: what it asked for.")
        var automate: [String] = []
        func run() async throws {
            if request.hasPrefix("chg-") {
                // A change keeps what is not given from the grant as it is now.
                let c = try await options.home().approveChange(
                    request, deviceTypes: deviceTypes.isEmpty ? nil : deviceTypes.map(IDRef.parse), includeSensitive: includeSensitive ? true : nil,
                    canControl: readOnly ? false : nil, sensitiveDevices: sensitiveDevices.isEmpty ? nil : sensitiveDevices.map { DeviceID(rawValue: $0) })
                try options.output(c, "Approved the change of '\(c.appName)' (\(c.grantID)): \(GrantsCommand.types(c.scope?.deviceTypes)).")
                return
            }
            let r = try await options.home().approve(
                request: request, deviceTypes: deviceTypes.isEmpty ? nil : deviceTypes.map(IDRef.parse), includeSensitive: includeSensitive,
                canControl: !readOnly, sensitiveDevices: sensitiveDevices.isEmpty ? nil : sensitiveDevices.map { DeviceID(rawValue: $0) },
                automationTypes: automate.isEmpty ? nil : automate.map(GrantsCommand.automationType))
            try options.output(r, "Approved '\(r.appName)' (\(r.id)); the app collects its token now.")
        }
    }
    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a live grant; the app's open subscriptions follow at once. What is not given stays.")
        @OptionGroup var options: ClientOptions
        @Argument var grant: String
        @Option(name: .customLong("device-type"), help: "A device type to allow (name or 0x… ID); repeat. Replaces the list.")
        var deviceTypes: [String] = []
        @Option(help: "Show every sensitive device (true) or only those chosen one by one (false).") var includeSensitive: Bool?
        @Option(name: .customLong("sensitive-device"), help: "A sensitive device to show; repeat. Replaces the list.")
        var sensitiveDevices: [String] = []
        @Option(help: "Allow commands (true) or read and observe only (false).") var control: Bool?
        func run() async throws {
            let g = try await options.home().editGrant(
                grant, deviceTypes: deviceTypes.isEmpty ? nil : deviceTypes.map(IDRef.parse), includeSensitive: includeSensitive,
                canControl: control, sensitiveDevices: sensitiveDevices.isEmpty ? nil : sensitiveDevices.map { DeviceID(rawValue: $0) })
            try options.output(g, "Changed '\(g.appName)' (\(g.id)): \(GrantsCommand.types(g.scope.deviceTypes)).")
        }
    }
    struct Deny: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var request: String
        func run() async throws {
            if request.hasPrefix("chg-") {
                let c = try await options.home().denyChange(request)
                try options.output(c, "Denied the change of '\(c.appName)'; its grant stays as it was.")
                return
            }
            let r = try await options.home().deny(request: request)
            try options.output(r, "Denied '\(r.appName)'.")
        }
    }
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a grant: the app's sockets close at once.")
        @OptionGroup var options: ClientOptions
        @Argument var grant: String
        func run() async throws {
            try await options.home().revokeGrant(grant)
            options.say("Revoked \(grant).")
        }
    }

    static func types(_ ids: [DeviceTypeID]?) -> String {
        guard let ids else { return "all" }
        return ids.map { Catalog.standard.deviceType($0)?.name ?? $0.hex }.joined(separator: ", ")
    }
}

extension GrantsCommand {
    /// `OnOffLight:OnOff` → the pair (names or 0x… IDs).
    static func automationType(_ text: String) throws -> WireAutomationTypeRef {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw ValidationError("--automate takes DEVICETYPE:TRAIT (got '\(text)')") }
        return WireAutomationTypeRef(deviceType: .parse(parts[0]), trait: .parse(parts[1]))
    }
}
