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
    /// `On/Off Light` (primary type).
    var typeName: String { primaryTypeName }
    /// The readings in human units for a table (`Temperature 21.4 °C`); `--json` keeps the spec's units.
    var stateSummary: String {
        let readings = self.readings
        return readings.isEmpty ? "-" : readings.map { "\($0.label) \($0.text)" }.joined(separator: ", ")
    }
}
