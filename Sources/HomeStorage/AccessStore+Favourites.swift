import GRDB
import HomeCore
public import HomeModel

/// Favourites per user: the devices a person pinned to the top of their home, in their order,
/// in `access_favourites` (removed with the user).
extension AccessStore {
    /// At most this many favourites per user.
    public static let maxFavourites = 500

    public func favourites(username: String) throws(HomeError) -> [DeviceID] {
        try read { db in
            try String.fetchAll(
                db, sql: "SELECT device_id FROM access_favourites WHERE username = ? ORDER BY position", arguments: [username]
            ).map { DeviceID(rawValue: $0) }
        }
    }

    @discardableResult
    public func setFavourites(username: String, _ devices: [DeviceID]) throws(HomeError) -> [DeviceID] {
        var seen = Set<DeviceID>()
        let unique = devices.filter { seen.insert($0).inserted }
        guard unique.count <= Self.maxFavourites else {
            throw .invalidArgument("at most \(Self.maxFavourites) favourites (got \(unique.count))")
        }
        if let bad = unique.first(where: { $0.rawValue.isEmpty || $0.rawValue.utf8.count > 256 }) {
            throw .invalidArgument("'\(bad.rawValue.prefix(40))' is not a device ID")
        }
        try write { db in
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_users WHERE username = ?", arguments: [username]) == 1 else {
                throw HomeError.notFound("no user named '\(username)'")
            }
            try db.execute(sql: "DELETE FROM access_favourites WHERE username = ?", arguments: [username])
            for (position, device) in unique.enumerated() {
                try db.execute(
                    sql: "INSERT INTO access_favourites (username, device_id, position) VALUES (?, ?, ?)",
                    arguments: [username, device.rawValue, position])
            }
        }
        return unique
    }
}
