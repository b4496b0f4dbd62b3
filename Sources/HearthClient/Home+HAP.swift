public import HearthAPI
public import HomeModel

extension Home {
    /// The HomeKit bridges with their setup codes, QR codes and pairings (admins).
    public func hapBridges() async throws(HomeError) -> WireHAP { try await connection.send("GET", "hap") }

    /// Removes every pairing of bridge `number` (1 = the first): it can be added to Home again (admins).
    public func unpairHAP(bridge number: Int) async throws(HomeError) -> WireHAP {
        try await connection.send("DELETE", "hap/bridges/\(number)/pairings", body: nil as String?)
    }
}
