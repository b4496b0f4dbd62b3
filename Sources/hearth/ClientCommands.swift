import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

/// Options every command that talks to hearthd shares.
struct ClientOptions: ParsableArguments {
    @Option(help: "hearthd's URL (default: the signed-in session's, else $HEARTH_URL, else http://127.0.0.1:8080).")
    var url: String?

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    var store: FileSessionStore { FileSessionStore.standard() }

    func baseURL() throws -> URL {
        let stored = try? store.load()
        let text = url ?? stored?.url ?? ProcessInfo.processInfo.environment["HEARTH_URL"] ?? "http://127.0.0.1:8080"
        return try HearthConnection.url(text)
    }

    /// The signed-in session; a clear error when there is none.
    func home() throws -> Home {
        guard let credentials = try store.load() else {
            throw CLIError("not signed in: run 'hearth login --username NAME' (or 'hearth setup --code CODE' on a new hearthd)")
        }
        let base = try url.map { text throws(HomeError) in try HearthConnection.url(text) } ?? HearthConnection.url(credentials.url)
        return Home(connection: HearthConnection(baseURL: base, token: credentials.token), credentials: credentials, store: store)
    }

    func print<T: Encodable>(json value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Prints what a command returned: `value` as JSON with `--json`, else the sentence `text`.
    func output<T: Encodable>(_ value: T, _ text: @autoclosure () -> String) throws {
        if json { try print(json: value) } else { Swift.print(text()) }
    }

    /// Prints a list: JSON with `--json`, else a table of `columns` with one `row` per item.
    func output<T: Encodable>(_ items: [T], columns: [String], row: (T) -> [String]) throws {
        if json { try print(json: items) } else { Swift.print(table(columns, items.map(row))) }
    }

    /// Says what a command that returns nothing did (nothing with `--json`).
    func say(_ text: String) {
        if !json { Swift.print(text) }
    }
}

/// An error the CLI prints as `hearth: <message>` and exits 1 with.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// Reads a password: `--password-stdin` reads one line; else $HEARTH_PASSWORD; else a prompt.
func readPassword(fromStdin: Bool, prompt: String) throws -> String {
    if fromStdin {
        guard let line = Swift.readLine(strippingNewline: true), !line.isEmpty else { throw CLIError("no password on standard input") }
        return line
    }
    if let env = ProcessInfo.processInfo.environment["HEARTH_PASSWORD"], !env.isEmpty { return env }
    guard let p = getpass(prompt) else { throw CLIError("no password given") }
    return String(cString: p)
}

/// Reads a new password: `--password-stdin` reads the next line; else a prompt, asked twice so
/// a typo cannot lock anyone out. Never $HEARTH_PASSWORD (that is the password in use).
func readNewPassword(fromStdin: Bool, prompt: String) throws -> String {
    if fromStdin {
        guard let line = Swift.readLine(strippingNewline: true), !line.isEmpty else { throw CLIError("no new password on standard input") }
        return line
    }
    guard let first = getpass(prompt).map({ String(cString: $0) }), !first.isEmpty else { throw CLIError("no password given") }
    guard let again = getpass("Again: ").map({ String(cString: $0) }), again == first else { throw CLIError("the two passwords differ") }
    return first
}

/// A plain table: columns padded to their widest cell.
func table(_ header: [String], _ rows: [[String]]) -> String {
    var widths = header.map(\.count)
    for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { i, c in i == cells.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
            .joined(separator: "  ")
    }
    return ([line(header)] + rows.map(line)).joined(separator: "\n")
}

/// A value typed on the command line: JSON (`true`, `42`, `"x"`, `[1,2]`) or else a plain string.
func parseValue(_ text: String) -> Value {
    (try? JSONDecoder().decode(Value.self, from: Data(text.utf8))) ?? .string(text)
}

extension WireDevice {
    /// `On/Off Light` (primary type) and a short state (`on`, `21.5 °C`).
    var typeName: String { types.first(where: \.isPrimaryType)?.name ?? primaryType?.hex ?? "-" }
    var stateSummary: String {
        guard let primary = types.first(where: \.isPrimaryType) ?? types.first else { return "" }
        return primary.traits.flatMap { t in
            t.attributes.prefix(2).map { "\($0.name ?? $0.id.hex)=\($0.value)" }
        }.prefix(3).joined(separator: " ")
    }
}

// MARK: - Sign-in

struct SetupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup", abstract: "Finish a new hearthd's setup: the one-time code it printed, and the admin's password.")
    @OptionGroup var options: ClientOptions
    @Option(help: "The setup code from hearthd's log or its state folder's setup-code file.") var code: String
    @Flag(help: "Read the new password from standard input.") var passwordStdin = false

    func run() async throws {
        let password = try readPassword(fromStdin: passwordStdin, prompt: "New admin password: ")
        let home = try await Home.setup(url: try options.baseURL(), code: code, password: password, store: options.store)
        if options.json { try options.print(json: try await home.me()) } else { print("Signed in as admin. Add people with 'hearth users add'.") }
    }
}

struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "login", abstract: "Sign in and keep the session.")
    @OptionGroup var options: ClientOptions
    @Option(help: "Your user name.") var username: String
    @Flag(help: "Read the password from standard input.") var passwordStdin = false

    func run() async throws {
        let password = try readPassword(fromStdin: passwordStdin, prompt: "Password for \(username): ")
        let home = try await Home.signIn(url: try options.baseURL(), username: username, password: password, store: options.store)
        let me = try await home.me()
        try options.output(me, "Signed in as \(me.principal) (\(me.role)).")
    }
}

struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "Sign out: the token is revoked and forgotten.")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        guard (try options.store.load()) != nil else {
            print("Not signed in.")
            return
        }
        do {
            try await options.home().disconnect()
        } catch let e as HomeError where e.code == .permissionDenied || e.code == .unauthenticated {
            try options.store.clear()
        }
        options.say("Signed out.")
    }
}

struct PasswdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd", abstract: "Change your password; your other sessions are signed out.",
        discussion: "With --password-stdin, standard input has two lines: the current password, then the new one.")
    @OptionGroup var options: ClientOptions
    @Flag(help: "Read the current and the new password from standard input, one a line.") var passwordStdin = false

    func run() async throws {
        let home = try options.home()
        let current = try readPassword(fromStdin: passwordStdin, prompt: "Current password: ")
        let new = try readNewPassword(fromStdin: passwordStdin, prompt: "New password: ")
        try await home.changePassword(current: current, new: new)
        options.say("Password changed; your other sessions are signed out.")
    }
}

// MARK: - Reading

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
        commandName: "device", abstract: "Show, rename or move one device.", subcommands: [Show.self, Rename.self, Move.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a device: types, traits, attributes in spec units.")
        @OptionGroup var options: ClientOptions
        @Argument(help: "The device ID (plugin:local).") var id: String

        func run() async throws {
            let d: WireDevice = try await options.home().connection.send("GET", "devices/\(id)")
            if options.json { return try options.print(json: d) }
            print("\(d.name)  (\(d.id))")
            print("  commissioning: \(d.commissioning.rawValue)   room: \(d.roomID?.rawValue ?? "-")   structure: \(d.structureID?.rawValue ?? "-")")
            print("  connectivity: \(d.sourceConnectivity.connectivityState.rawValue), \(d.sourceConnectivity.dataSourceLocality.rawValue)")
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

// MARK: - Commissioning and control

struct CommissionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "commission", abstract: "Commission a discovered device (admins).")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The discovered device's ID.") var id: String
    @Option(help: "Its name (letters, digits, spaces, apostrophes).") var name: String
    @Option(help: "The structure ID.") var structure: String
    @Option(help: "The room ID.") var room: String?
    @Option(help: "The device type to show it as (name or 0x… ID).") var primaryType: String?

    func run() async throws {
        let r = try await options.home().commission(
            DeviceID(rawValue: id), name: name, structure: StructureID(rawValue: structure), room: room.map { RoomID(rawValue: $0) },
            primaryType: primaryType.map(IDRef.parse))
        if options.json { return try options.print(json: r) }
        print("Commissioned \(r.device.id) as '\(r.device.name)'.")
        if let warning = r.warning { print("Note: \(warning)" + (r.suggestions.isEmpty ? "" : " (maybe: \(r.suggestions.joined(separator: ", ")))")) }
    }
}

struct InvokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "command", abstract: "Send a command: hearth command demo:lamp OnOffLight OnOff toggle [--arg level=128].")
    @OptionGroup var options: ClientOptions
    @Argument var device: String
    @Argument(help: "Device type (name or 0x… ID).") var type: String
    @Argument(help: "Trait (name or 0x… ID).") var trait: String
    @Argument(help: "Command (name or 0x… ID).") var command: String
    @Option(name: .customLong("arg"), help: "An argument as name=value (value is JSON or text); repeat for more.") var args: [String] = []

    func run() async throws {
        var arguments: [String: Value] = [:]
        for a in args {
            guard let eq = a.firstIndex(of: "=") else { throw ValidationError("--arg needs name=value (got '\(a)')") }
            arguments[String(a[..<eq])] = parseValue(String(a[a.index(after: eq)...]))
        }
        let result = try await options.home().command(
            device: DeviceID(rawValue: device), type: .parse(type), trait: .parse(trait), command: .parse(command), args: arguments)
        try options.output(CommandWireResponse(result: result), result.isNull ? "OK" : "\(result)")
    }
}

struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Write an attribute: hearth set demo:lamp OnOffLight OnOff onTime 300.")
    @OptionGroup var options: ClientOptions
    @Argument var device: String
    @Argument var type: String
    @Argument var trait: String
    @Argument var attribute: String
    @Argument(help: "The value (JSON, or text).") var value: String

    func run() async throws {
        try await options.home().set(
            device: DeviceID(rawValue: device), type: .parse(type), trait: .parse(trait), attribute: .parse(attribute), value: parseValue(value))
        options.say("OK")
    }
}

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Watch live: devices, rooms, structures, discovered, events, or one device (--device).")
    @OptionGroup var options: ClientOptions
    @Argument(help: "devices, rooms, structures, discovered, events.") var what: String = "devices"
    @Option(help: "Watch one device.") var device: String?
    @Flag(help: "Print changes (added/updated/removed) instead of the whole set each time.") var changes = false
    @Option(help: "Stop after this many updates.") var count: Int?

    func run() async throws {
        let home = try options.home()
        let subscribe = WSClientMessage(
            type: "subscribe", id: "watch", query: device == nil ? what : "device", mode: changes ? "stream" : "batched",
            device: device.map { DeviceID(rawValue: $0) })
        var seen = 0
        for await m in home.messages(subscribe) {
            if m.type == "error" || m.type == "closing" || m.type == "end" {
                throw CLIError(m.error?.description ?? m.reason ?? "the subscription ended")
            }
            // Written unbuffered, so a pipe sees each update as it happens.
            let line: String
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                line = String(decoding: try encoder.encode(m), as: UTF8.self)
            } else {
                line = Self.describe(m)
            }
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            seen += 1
            if let count, seen >= count { return }
        }
        throw CLIError("the connection to hearthd closed")
    }

    static func describe(_ m: WSServerMessage) -> String {
        switch m.type {
        case "snapshot":
            let items = (m.devices?.map { "\($0.name) [\($0.stateSummary)]" } ?? []) + (m.rooms?.map(\.name) ?? []) + (m.structures?.map(\.name) ?? [])
            return "v\(m.version ?? 0): \(items.count) — " + items.joined(separator: ", ")
        case "added", "updated":
            let name = m.device.map { "\($0.name) [\($0.stateSummary)]" } ?? m.room?.name ?? m.structure?.name ?? "?"
            return "\(m.type) \(name)"
        case "removed": return "removed \(m.key ?? "?")"
        case "device": return m.device.map { "\($0.name): \($0.stateSummary)" } ?? "device"
        case "event": return m.event.map { "\($0.device) \($0.name ?? $0.event.hex) \($0.fields)" } ?? "event"
        default: return m.type
        }
    }
}

// MARK: - Users, grants, plugins

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "List, add or remove users, or reset a password (admins).",
        subcommands: [List.self, Add.self, Remove.self, ResetPassword.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let users = try await options.home().users()
            try options.output(users, columns: ["USER", "ROLE", "PASSWORD"]) { [$0.username, $0.role, $0.hasPassword ? "set" : "not set (setup code)"] }
        }
    }
    struct Add: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var username: String
        @Option(help: "admin or member.") var role: String = "member"
        @Flag(help: "Read the password from standard input.") var passwordStdin = false
        func run() async throws {
            let password = try readPassword(fromStdin: passwordStdin, prompt: "Password for \(username): ")
            let u = try await options.home().addUser(username, password: password, role: role)
            try options.output(u, "Added \(u.role) '\(u.username)'.")
        }
    }
    struct Remove: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var username: String
        func run() async throws {
            try await options.home().removeUser(username)
            options.say("Removed '\(username)'; their sessions are closed.")
        }
    }
    struct ResetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-password", abstract: "Set a user's password; their sessions are closed.")
        @OptionGroup var options: ClientOptions
        @Argument var username: String
        @Flag(help: "Read the new password from standard input.") var passwordStdin = false
        func run() async throws {
            let home = try options.home()
            let password = try readNewPassword(fromStdin: passwordStdin, prompt: "New password for \(username): ")
            try await home.resetPassword(user: username, to: password)
            options.say("Set the password of '\(username)'; their sessions are closed.")
        }
    }
}

struct GrantsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grants", abstract: "App access: pending requests, approve, deny, list, revoke (admins).",
        subcommands: [List.self, Pending.self, Approve.self, Deny.self, Revoke.self], defaultSubcommand: List.self)

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
            try options.output(requests, columns: ["REQUEST", "APP", "ASKS FOR"]) { [$0.id, $0.appName, GrantsCommand.types($0.requestedDeviceTypes.isEmpty ? nil : $0.requestedDeviceTypes)] }
        }
    }
    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve an app request, choosing what it may see.")
        @OptionGroup var options: ClientOptions
        @Argument var request: String
        @Option(name: .customLong("device-type"), help: "A device type to allow (name or 0x… ID); repeat. Default: what the app asked for.")
        var deviceTypes: [String] = []
        @Flag(help: "Include sensitive devices (locks, garage doors, alarms).") var includeSensitive = false
        @Flag(help: "Read and observe only, no commands.") var readOnly = false
        func run() async throws {
            let r = try await options.home().approve(
                request: request, deviceTypes: deviceTypes.isEmpty ? nil : deviceTypes.map(IDRef.parse), includeSensitive: includeSensitive,
                canControl: !readOnly)
            try options.output(r, "Approved '\(r.appName)' (\(r.id)); the app collects its token now.")
        }
    }
    struct Deny: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var request: String
        func run() async throws {
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

struct PluginsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "plugins", abstract: "Plugins hearthd runs, with their state.")
    @OptionGroup var options: ClientOptions
    func run() async throws {
        let plugins = try await options.home().plugins()
        try options.output(plugins, columns: ["PLUGIN", "VERSION", "STATE", "RESTARTS", "LAST ERROR"]) { [$0.id, $0.version, $0.state, "\($0.restarts)", $0.lastError ?? "-"] }
    }
}
