import Foundation

/// What a client keeps between runs: where the daemon is and the bearer token.
public struct HearthCredentials: Hashable, Sendable, Codable {
    public let url: String
    public let token: String
    public let tokenID: String
    /// `user:alice` or `app:Dashboard`.
    public let principal: String

    public init(url: String, token: String, tokenID: String, principal: String) {
        self.url = url
        self.token = token
        self.tokenID = tokenID
        self.principal = principal
    }
}

/// Where credentials are kept (``FileSessionStore`` for the CLI and apps on Linux).
public protocol SessionStore: Sendable {
    func load() throws -> HearthCredentials?
    func save(_ credentials: HearthCredentials) throws
    func clear() throws
}

/// Credentials in a JSON file readable only by its owner (mode 0600).
public struct FileSessionStore: SessionStore {
    public let path: String

    public init(path: String) { self.path = path }

    /// `$HEARTH_CONFIG_DIR/<name>.json`, else `$XDG_CONFIG_HOME/hearth/…`, else `~/.config/hearth/…`.
    public static func standard(name: String = "session") -> FileSessionStore {
        let env = ProcessInfo.processInfo.environment
        let dir = env["HEARTH_CONFIG_DIR"]
            ?? env["XDG_CONFIG_HOME"].map { $0 + "/hearth" }
            ?? (NSHomeDirectory() + "/.config/hearth")
        return FileSessionStore(path: dir + "/\(name).json")
    }

    public func load() throws -> HearthCredentials? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try JSONDecoder().decode(HearthCredentials.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    public func save(_ credentials: HearthCredentials) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let data = try JSONEncoder().encode(credentials)
        _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        try data.write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    public func clear() throws {
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
    }
}
