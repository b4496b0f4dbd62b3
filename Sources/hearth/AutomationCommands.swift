import ArgumentParser
import Foundation
import HearthClient
import HomeModel

// Scenes and automations (issue 18): `hearth scenes …`, `hearth automations …`.

extension ClientOptions {
    /// A request whose answer is any JSON (shown as a table or, with --json, as is).
    func call(_ method: String, _ path: String, body: Value? = nil) async throws -> Value {
        let (data, _) = try await home().connection.raw(method, path, body: body)
        if data.isEmpty { return .null }
        return (try? JSONDecoder().decode(Value.self, from: data)) ?? .null
    }

    /// A JSON file (`-` for standard input) as a value.
    func readJSON(_ file: String) throws -> Value {
        let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
        guard let data else { throw CLIError("cannot read \(file)") }
        do {
            return try JSONDecoder().decode(Value.self, from: data)
        } catch {
            throw CLIError("\(file) is not JSON: \(error)")
        }
    }
}

func cell(_ v: Value?) -> String {
    guard let v else { return "-" }
    if let s = v.stringValue { return s }
    return v.description
}

struct ScenesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenes", abstract: "List, show, recall, capture, create and delete scenes (members recall; admins edit).",
        subcommands: [List.self, Show.self, Recall.self, Capture.self, Apply.self, Delete.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every scene you can see, and whether it is active now.")
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let list = try await options.call("GET", "scenes").listValue ?? []
            try options.output(list, columns: ["ID", "NAME", "TARGETS", "ACTIVE", "REVISION"]) {
                [cell($0["id"]), cell($0["name"]), "\($0["targets"]?.listValue?.count ?? 0)", cell($0["isActive"]), cell($0["revision"])]
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One scene with its targets.")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            let s = try await options.call("GET", "scenes/\(id)")
            let targets = (s["targets"]?.listValue ?? []).map { [cell($0["device"]), cell($0["trait"]), cell($0["attribute"]), cell($0["value"])] }
            try options.output(
                s, "\(cell(s["name"])) (\(cell(s["id"])), revision \(cell(s["revision"])), \(s["isActive"] == true ? "active" : "not active"))\n"
                    + table(["DEVICE", "TRAIT", "ATTRIBUTE", "VALUE"], targets))
        }
    }

    struct Recall: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Recall a scene: each target through the normal command path.")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            let r = try await options.call("POST", "scenes/\(id)/recall")
            let rows = (r["steps"]?.listValue ?? []).map { [cell($0["device"]), cell($0["result"]), cell($0["message"])] }
            try options.output(r, table(["DEVICE", "RESULT", "MESSAGE"], rows))
            if (r["failed"]?.intValue ?? 0) > 0 { throw ExitCode(1) }
        }
    }

    struct Capture: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store the devices' current values in a scene's targets (admins).",
            discussion: "The same devices and attributes; each value becomes what the device reports now. The revision goes up.")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            let s = try await options.call("POST", "scenes/\(id)/capture")
            let targets = (s["targets"]?.listValue ?? []).map { [cell($0["device"]), cell($0["trait"]), cell($0["attribute"]), cell($0["value"])] }
            try options.output(
                s, "captured scene \(id) (revision \(cell(s["revision"])))\n" + table(["DEVICE", "TRAIT", "ATTRIBUTE", "VALUE"], targets))
        }
    }

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a scene from a JSON file, or replace it (admins).",
            discussion: #"File: {"id":"evening","name":"Evening","targets":[{"device":"gpio:lamp","trait":"OnOff","attribute":"OnOff","value":true}]}"#)
        @OptionGroup var options: ClientOptions
        @Argument(help: "The JSON file, or - for standard input.") var file: String
        func run() async throws {
            let body = try options.readJSON(file)
            guard let id = body["id"]?.stringValue else { throw CLIError("\(file): the scene needs an id") }
            let exists = (try? await options.call("GET", "scenes/\(id)")) != nil
            let s = try await options.call(exists ? "PUT" : "POST", exists ? "scenes/\(id)" : "scenes", body: body)
            try options.output(s, "\(exists ? "updated" : "created") scene \(id) (revision \(cell(s["revision"])))")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a scene (admins).")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            _ = try await options.call("DELETE", "scenes/\(id)")
            options.say("deleted scene \(id)")
        }
    }
}

struct AutomationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "automations", abstract: "List, validate, apply, run, simulate and trace automations.",
        subcommands: [List.self, Show.self, Validate.self, Apply.self, Run.self, Simulate.self, Enable.self, Disable.self, Delete.self, Runs.self, Trace.self],
        defaultSubcommand: List.self)

    static func issues(_ list: [Value]) -> String {
        list.map { i in
            "\(cell(i["severity"])): \(cell(i["path"])): \(cell(i["message"]))" + (i["suggestion"].map { " (did you mean \(cell($0))?)" } ?? "")
        }.joined(separator: "\n")
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every automation, its state and revision.")
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let list = try await options.call("GET", "automations").listValue ?? []
            try options.output(list, columns: ["ID", "NAME", "STATE", "REVISION", "SOURCE"]) {
                [cell($0["automation"]?["id"]), cell($0["automation"]?["name"]), cell($0["state"]), cell($0["revision"]), cell($0["configRef"] ?? $0["source"])]
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One automation as JSON.")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws { try options.print(json: try await options.call("GET", "automations/\(id)")) }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every problem in an automation file (saves nothing).")
        @OptionGroup var options: ClientOptions
        @Argument(help: "The JSON file, or - for standard input.") var file: String
        func run() async throws {
            let r = try await options.call("POST", "automations/validate", body: try options.readJSON(file))
            let list = r["issues"]?.listValue ?? []
            try options.output(r, list.isEmpty ? "\(file): no problems" : AutomationsCommand.issues(list))
            if list.contains(where: { $0["severity"] == "error" }) { throw ExitCode(1) }
        }
    }

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create or replace an automation from a JSON file (admins).")
        @OptionGroup var options: ClientOptions
        @Argument(help: "The JSON file, or - for standard input.") var file: String
        func run() async throws {
            let body = try options.readJSON(file)
            guard let id = body["id"]?.stringValue else { throw CLIError("\(file): the automation needs an id") }
            let issues = try await options.call("POST", "automations/validate", body: body)["issues"]?.listValue ?? []
            if issues.contains(where: { $0["severity"] == "error" }) { throw CLIError("\(file):\n" + AutomationsCommand.issues(issues)) }
            let existing = try? await options.call("GET", "automations/\(id)")
            let path = existing.map { "automations/\(id)?revision=\(cell($0["revision"]))" } ?? "automations"
            let saved = try await options.call(existing == nil ? "POST" : "PUT", path, body: body)
            try options.output(saved, "\(existing == nil ? "created" : "updated") automation \(id) (revision \(cell(saved["revision"])))")
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start an automation now (members: only with a manual starter).")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            let r = try await options.call("POST", "automations/\(id)/run")
            try options.output(r, "started \(id): run \(cell(r["run"])) (hearth automations trace \(cell(r["run"])))")
        }
    }

    struct Simulate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A dry run: what it would check and send, touching no device.")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        @Option(help: "The starter id to pretend fired.") var starter: String?
        func run() async throws {
            let t = try await options.call("POST", "automations/\(id)/simulate", body: .object(starter.map { ["starter": .string($0)] } ?? [:]))
            try options.output(t, TraceCommandText.render(t))
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable (or resume a suspended) automation (admins).")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws { try options.output(try await options.call("POST", "automations/\(id)/enable"), "enabled \(id)") }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an automation (admins).")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws { try options.output(try await options.call("POST", "automations/\(id)/disable"), "disabled \(id)") }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an automation (admins).")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            _ = try await options.call("DELETE", "automations/\(id)")
            options.say("deleted automation \(id)")
        }
    }

    struct Runs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The last runs and near-misses, newest first.")
        @OptionGroup var options: ClientOptions
        @Argument var id: String
        func run() async throws {
            let list = try await options.call("GET", "automations/\(id)/runs").listValue ?? []
            try options.output(list, columns: ["RUN", "STARTED", "OUTCOME", "CAUSE", "REASON"]) {
                [cell($0["id"]), cell($0["started"]), cell($0["outcome"]), cell($0["cause"]?["description"]), cell($0["reason"])]
            }
        }
    }

    struct Trace: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One run as a tree: cause, conditions, steps.")
        @OptionGroup var options: ClientOptions
        @Argument var run: String
        func run() async throws {
            let t = try await options.call("GET", "runs/\(run)")
            try options.output(t, TraceCommandText.render(t))
        }
    }
}

enum TraceCommandText {
    static func render(_ t: Value) -> String {
        var lines = ["\(cell(t["id"])) \(cell(t["automation"])): \(cell(t["outcome"]))" + (t["reason"].map { " — \(cell($0))" } ?? "")]
        lines.append("├─ cause: \(cell(t["cause"]?["description"]))")
        for c in t["conditions"]?.listValue ?? [] {
            lines.append("├─ \(c["holds"] == true ? "✓" : "✗") \(cell(c["path"])): \(cell(c["saw"]))")
        }
        for s in t["steps"]?.listValue ?? [] {
            let ms = s["milliseconds"]?.doubleValue.map { String(format: " (%.2f ms)", $0) } ?? ""
            lines.append("├─ \(cell(s["path"])) \(cell(s["kind"])): \(cell(s["detail"])) → \(cell(s["result"]))\(ms)" + (s["message"].map { ": \(cell($0))" } ?? ""))
        }
        if let l = t["latencyMicroseconds"]?.intValue { lines.append("└─ latency: \(l) µs from the change to the first command") }
        return lines.joined(separator: "\n")
    }
}
