import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// Commissioning and control: commission, invoke, set, watch.

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
        commandName: "watch", abstract: "Watch live: devices, rooms, structures, discovered, events, runs (automation traces), or one device (--device).")
    @OptionGroup var options: ClientOptions
    @Argument(help: "devices, rooms, structures, discovered, users, events, runs.") var what: String = "devices"
    @Option(help: "Watch one device.") var device: String?
    @Option(help: "With 'runs': the traces of this automation only.") var automation: String?
    @Flag(help: "Print changes (added/updated/removed) instead of the whole set each time.") var changes = false
    @Option(help: "Stop after this many updates.") var count: Int?

    func validate() throws {
        guard device != nil || what == "runs" || SubscriptionQuery.Name(rawValue: what) != nil else {
            throw ValidationError("watch devices, rooms, structures, discovered, users, deviceUpdates, deviceDeltas, events or runs (got '\(what)')")
        }
    }

    /// The subscription the arguments ask for.
    var query: SubscriptionQuery {
        if let device { return .device(DeviceID(rawValue: device)) }
        if what == "runs" { return .automationRuns(automation: automation) }
        let mode: SubscriptionMode = changes ? .stream : .batched
        switch SubscriptionQuery.Name(rawValue: what) ?? .devices {
        case .devices: return .devices(mode)
        case .discovered: return .discovered(mode)
        case .rooms: return .rooms(mode)
        case .structures: return .structures(mode)
        case .users: return .users(mode)
        case .device, .deviceUpdates: return .deviceUpdates
        case .deviceDeltas: return .deviceDeltas
        case .events: return .events(device: nil, trait: nil)
        case .automationRuns: return .automationRuns(automation: automation)
        }
    }

    func run() async throws {
        let home = try options.home()
        var seen = 0
        for await m in home.messages(.subscribe(id: "watch", query)) {
            switch m {
            case .error(_, let e), .closing(let e): throw CLIError(e.description)
            case .end(_, _, let message): throw CLIError(message.isEmpty ? "the subscription ended" : message)
            default: break
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
        func name(_ e: SetElement) -> String {
            switch e {
            case .device(let d): "\(d.name) [\(d.stateSummary)]"
            case .room(let r): r.name
            case .structure(let s): s.name
            case .user(let u): "\(u.username) (\(u.role.rawValue))"
            }
        }
        switch m {
        case .snapshot(_, let version, let set):
            let items: [String]
            switch set {
            case .devices(let d): items = d.map { name(.device($0)) }
            case .rooms(let r): items = r.map(\.name)
            case .structures(let s): items = s.map(\.name)
            case .users(let u): items = u.map { name(.user($0)) }
            }
            return "v\(version): \(items.count) — " + items.joined(separator: ", ")
        case .added(_, let e): return "added \(name(e))"
        case .updated(_, let e): return "updated \(name(e))"
        case .removed(_, let key): return "removed \(key)"
        case .device(_, let d): return "\(d.name): \(d.stateSummary)"
        case .changed(_, let version, let devices): return "v\(version): " + devices.map { name(.device($0)) }.joined(separator: ", ")
        case .delta(_, let version, let changes):
            return "v\(version): " + changes.map { c in
                c.full.map { name(.device($0)) } ?? "\(c.device) " + c.attributes.map { "\($0.trait.hex).\($0.attribute.hex)=\($0.value)" }.joined(separator: " ")
            }.joined(separator: ", ")
        case .event(_, let e): return "\(e.device) \(e.name ?? e.event.hex) \(e.fields)"
        case .run(_, let run, let missed):
            let u = WireRunUpdate(run: run, missed: missed)
            let reason = run["reason"]?.stringValue.map { ": \($0)" } ?? ""
            return (missed > 0 ? "(\(missed) update(s) missed) " : "") + "\(u.automation ?? "?") \(u.id ?? "?") \(u.outcome ?? "?")\(reason)"
        default: return m.kind.rawValue
        }
    }
}
