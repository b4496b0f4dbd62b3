import Foundation

extension HearthConfig {
    /// The database file: `storage.database`, else `var/hearth.sqlite` beside the
    /// configuration's folder when that folder is `etc/` (the repository and install layouts:
    /// `etc/hearth.yaml` → `var/hearth.sqlite`), else `var/hearth.sqlite` inside it.
    public var databasePath: String {
        if let database { return database }
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL
        let base = folder.lastPathComponent == "etc" ? folder.deletingLastPathComponent() : folder
        return base.appendingPathComponent("var/hearth.sqlite").path
    }
}
