public import HomeModel
import HearthAPI

extension Home {
    /// The signed-in person's favourite devices, in their order (kept by hearthd, so every
    /// browser and app of theirs sees the same). Apps get `permissionDenied`.
    public func favourites() async throws(HomeError) -> [DeviceID] {
        let f: WireFavourites = try await connection.send("GET", "me/favourites")
        return f.devices
    }

    /// Replaces the signed-in person's favourites; returns them as stored (duplicates dropped).
    @discardableResult
    public func setFavourites(_ devices: [DeviceID]) async throws(HomeError) -> [DeviceID] {
        let f: WireFavourites = try await connection.send("PUT", "me/favourites", body: WireFavourites(devices: devices))
        return f.devices
    }
}
