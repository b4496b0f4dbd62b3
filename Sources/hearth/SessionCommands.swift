import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// Sign-in: first-start setup, login, logout, own password.

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
        try options.output(me, "Signed in as \(me.principal) (\(me.role.rawValue)).")
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
        } catch let e as HomeError where [.permissionDenied, .unauthenticated].contains(WireErrorCode(e.code)) {
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
