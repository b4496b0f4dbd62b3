import Foundation
public import HomeModel

/// An exclusive advisory lock beside a database file (`hearth.sqlite.lock`), held by hearthd
/// while it runs and by `hearth restore` while it replaces the layout, so neither overwrites
/// the other. The kernel releases it when the process ends, however it ends (kill -9 too).
public final class DatabaseLock: Sendable {
    /// The lock file.
    public let path: String
    let descriptor: Int32

    /// Takes the lock for `database`, or throws at once if another process holds it.
    ///
    /// - Parameter holder: who takes it, for the message another process gets (`hearthd`).
    /// - Throws: `conflict` naming the database when the lock is held.
    public init(database: String, holder: String) throws(HomeError) {
        path = database + ".lock"
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw HomeError(.storageFailure, "\(path): cannot open the lock file: \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let other = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            close(fd)
            throw .conflict(
                "\(database) is in use by \(other.flatMap { $0.isEmpty ? nil : $0 } ?? "another process")"
                    + "; stop it first (e.g. `systemctl stop hearthd`)")
        }
        _ = ftruncate(fd, 0)
        let note = "\(holder) (pid \(getpid()))\n"
        _ = note.withCString { write(fd, $0, strlen($0)) }
        descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
