public import HearthAPI
public import HomeModel

extension Home {
    /// The Matter bridge: pairing code, QR payload, window and fabrics (admins).
    public func matterBridge() async throws(HomeError) -> WireMatter { try await connection.send("GET", "matter") }

    /// Opens a commissioning window with the pairing code so another controller can add the bridge (admins).
    public func openMatterWindow() async throws(HomeError) -> WireMatter {
        try await connection.send("POST", "matter/window", body: nil as String?)
    }

    /// Removes a fabric: that controller loses the bridge (admins).
    public func removeMatterFabric(_ index: Int) async throws(HomeError) -> WireMatter {
        try await connection.send("DELETE", "matter/fabrics/\(index)", body: nil as String?)
    }
}
