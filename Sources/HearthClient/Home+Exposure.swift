public import HearthAPI
public import HomeModel

extension Home {
    /// What leaves the house through every door, and the verdict on each device (admins).
    public func exposure() async throws(HomeError) -> WireExposure { try await connection.send("GET", "exposure") }

    /// Replaces the exposure policy (admins); it is saved and wins over hearth.yaml's.
    public func setExposure(_ policy: WireExposurePolicy) async throws(HomeError) -> WireExposure {
        try await connection.send("PUT", "exposure", body: policy)
    }

    /// Forgets the admin's policy: hearth.yaml's applies again.
    public func resetExposure() async throws(HomeError) -> WireExposure {
        try await connection.send("DELETE", "exposure", body: nil as String?)
    }
}
