public import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
import HomeModel

// Users (admins).

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "List, add or remove users, or reset a password (admins).",
        subcommands: [List.self, Add.self, Remove.self, ResetPassword.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        func run() async throws {
            let users = try await options.home().users().list()
            try options.output(users, columns: ["USER", "ROLE", "PASSWORD"]) { [$0.username, $0.role.rawValue, $0.hasPassword ? "set" : "not set (setup code)"] }
        }
    }
    struct Add: AsyncParsableCommand {
        @OptionGroup var options: ClientOptions
        @Argument var username: String
        @Option(help: "admin or member.") var role: WireRole = .member
        @Flag(help: "Read the password from standard input.") var passwordStdin = false
        func run() async throws {
            let password = try readPassword(fromStdin: passwordStdin, prompt: "Password for \(username): ")
            let u = try await options.home().addUser(username, password: password, role: role)
            try options.output(u, "Added \(u.role.rawValue) '\(u.username)'.")
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

/// `--role admin|member`.
extension WireRole: ExpressibleByArgument {}
