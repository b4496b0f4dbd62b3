import Foundation

/// What `hearth doctor` gives a plugin to check: its section of `hearth.yaml` (nil when the
/// file has none or none was read) and where the machine's devices and accounts are.
///
/// The paths are the real ones (`/dev`, `/etc/group`, `/etc/passwd`) unless the person (or a
/// test) running doctor points it at a staged folder.
public struct DoctorRequest: Sendable {
    /// The plugin's section of `hearth.yaml`; nil when the file has no section for it or no file
    /// was read.
    public var configuration: PluginConfiguration?
    /// The file doctor read, for messages ("not needed: /etc/hearth/hearth.yaml asks for…").
    public var configurationFile: String?
    /// The user the daemon runs as (the one whose permissions matter).
    public var user: String
    /// The folder holding the device nodes (`/dev`).
    public var deviceDirectory: String
    /// The machine's users and groups (for "is the daemon's user in the `gpio` group?").
    public var accounts: SystemAccounts

    public init(
        configuration: PluginConfiguration?, configurationFile: String? = nil, user: String, deviceDirectory: String = "/dev",
        accounts: SystemAccounts = SystemAccounts()
    ) {
        self.configuration = configuration
        self.configurationFile = configurationFile
        self.user = user
        self.deviceDirectory = deviceDirectory
        self.accounts = accounts
    }
}

/// Users and groups as the `passwd` and `group` files list them (a test stages its own).
public struct SystemAccounts: Sendable, Hashable {
    public var groupFile: String
    public var passwdFile: String

    public init(groupFile: String = "/etc/group", passwdFile: String = "/etc/passwd") {
        self.groupFile = groupFile
        self.passwdFile = passwdFile
    }

    private func rows(_ file: String) -> [[Substring]] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map { $0.split(separator: ":", omittingEmptySubsequences: false) }
    }

    /// The numeric ID of `user`'s primary group, if the user exists.
    public func primaryGroup(of user: String) -> String? {
        rows(passwdFile).first { $0.count > 3 && $0[0] == user }.map { String($0[3]) }
    }

    /// The group's ID and members, if the group exists.
    public func group(_ name: String) -> (gid: String, members: [String])? {
        guard let row = rows(groupFile).first(where: { $0.count > 3 && $0[0] == name }) else { return nil }
        return (String(row[2]), row[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// Whether `user` belongs to group `name`, as a member or by its primary group.
    public func user(_ user: String, isIn name: String) -> Bool {
        guard let g = group(name) else { return false }
        return g.members.contains(user) || primaryGroup(of: user) == g.gid
    }
}

/// One finding of a plugin's own checks, printed by `hearth doctor` as
/// `PROBLEM  gpio chips: cannot open gpiochip0 (Permission denied): …`.
public struct DoctorFinding: Hashable, Sendable, Codable {
    public enum Status: String, Hashable, Sendable, Codable, CaseIterable {
        case ok, problem, skipped
    }

    /// A short name, starting with the plugin's subject (`gpio chips`, `mqtt broker`).
    public var check: String
    public var status: Status
    /// What was found, and for a problem what to do about it, in plain words.
    public var explanation: String

    public init(check: String, status: Status, explanation: String) {
        self.check = check
        self.status = status
        self.explanation = explanation
    }
}
