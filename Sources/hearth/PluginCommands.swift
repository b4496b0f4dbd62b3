import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// Plugins hearthd runs.

struct PluginsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "plugins", abstract: "Plugins hearthd runs, with their state.")
    @OptionGroup var options: ClientOptions
    func run() async throws {
        let plugins = try await options.home().plugins()
        try options.output(plugins, columns: ["PLUGIN", "VERSION", "STATE", "RESTARTS", "LAST ERROR"]) { [$0.id, $0.version, $0.state.rawValue, "\($0.restarts)", $0.lastError ?? "-"] }
    }
}
