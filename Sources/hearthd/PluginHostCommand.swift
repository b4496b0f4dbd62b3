import ArgumentParser
import PluginHost

/// `hearthd plugin-host --plugin PATH --fd N`: the role `hearthd` plays as the child process of
/// an isolated plugin. Not for people to run: the daemon starts it with one end of a socket
/// pair on descriptor `N` and speaks `docs/plugin-protocol.md` over it.
struct PluginHostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin-host",
        abstract: "Serve one plugin .so to the daemon over a socket (started by hearthd for isolated plugins).",
        shouldDisplay: false)

    @Option(help: "The plugin .so to load.")
    var plugin: String

    @Option(help: "The descriptor of the connected socket.")
    var fd: Int32 = 3

    func run() async throws {
        let status = await PluginChild.serve(pluginPath: plugin, fd: fd)
        if status != 0 { throw ExitCode(status) }
    }
}
