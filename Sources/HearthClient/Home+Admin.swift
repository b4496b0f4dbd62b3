import Foundation
public import HearthAPI
public import HomeModel

/// Layout, commissioning, users and grants: what an admin does (others get `permissionDenied`).
extension Home {
    // MARK: Layout

    public func createStructure(named name: String) async throws(HomeError) -> StructureSnapshot {
        try await connection.send("POST", "structures", body: NameRequest(name: name))
    }

    public func renameStructure(_ id: StructureID, to name: String) async throws(HomeError) -> StructureSnapshot {
        try await connection.send("PATCH", "structures/\(segment(id.rawValue))", body: NameRequest(name: name))
    }

    public func deleteStructure(_ id: StructureID) async throws(HomeError) {
        try await connection.send("DELETE", "structures/\(segment(id.rawValue))", body: nil as String?)
    }

    public func createRoom(named name: String, in structure: StructureID) async throws(HomeError) -> RoomSnapshot {
        try await connection.send("POST", "rooms", body: RoomRequest(name: name, structure: structure))
    }

    public func renameRoom(_ id: RoomID, to name: String) async throws(HomeError) -> RoomSnapshot {
        try await connection.send("PATCH", "rooms/\(segment(id.rawValue))", body: NameRequest(name: name))
    }

    public func deleteRoom(_ id: RoomID) async throws(HomeError) {
        try await connection.send("DELETE", "rooms/\(segment(id.rawValue))", body: nil as String?)
    }

    /// Renames and/or moves a device (`room: .null` takes it out of its room).
    public func update(device: DeviceID, _ patch: DevicePatchRequest) async throws(HomeError) -> WireDevice {
        try await connection.send("PATCH", "devices/\(segment(device.rawValue))", body: patch)
    }

    /// Moves a device into a room, or out of its room with nil.
    public func move(device: DeviceID, to room: RoomID?) async throws(HomeError) -> WireDevice {
        try await update(device: device, DevicePatchRequest(room: room.map { .string($0.rawValue) } ?? .null))
    }

    /// Commissions a discovered device: name, structure, room, primary type.
    public func commission(
        _ device: DeviceID, name: String, structure: StructureID, room: RoomID? = nil, primaryType: IDRef? = nil
    ) async throws(HomeError) -> CommissionResponse {
        try await connection.send(
            "POST", "devices/\(segment(device.rawValue))/commission",
            body: CommissionRequest(name: name, structure: structure, room: room, primaryType: primaryType))
    }

    public func decommission(_ device: DeviceID) async throws(HomeError) -> WireDevice {
        try await connection.send("POST", "devices/\(segment(device.rawValue))/decommission", body: nil as String?)
    }

    // MARK: Users

    /// The people of the home (HomeKit's users): `list()`, and `batched()` / `stream()` to see
    /// users added and removed as it happens. Admins and members; names and roles only, never
    /// credentials. Apps get `permissionDenied`.
    public func users() -> RemoteQuery<WireUser> {
        RemoteQuery(home: self, path: "users", query: SubscriptionQuery.users) { set in
            guard case .users(let u) = set else { return [] }
            return u
        } element: { e in
            guard case .user(let u) = e else { return nil }
            return u
        } decode: {
            try HearthConnection.decoder.decode([WireUser].self, from: $0)
        }
    }

    public func addUser(_ username: String, password: String, role: WireRole) async throws(HomeError) -> WireUser {
        try await connection.send("POST", "users", body: UserRequest(username: username, password: password, role: role))
    }

    public func removeUser(_ username: String) async throws(HomeError) {
        try await connection.send("DELETE", "users/\(segment(username))", body: nil as String?)
    }

    /// Sets a user's password (admins); all that user's sessions end.
    public func resetPassword(user username: String, to password: String) async throws(HomeError) {
        try await connection.send("PUT", "users/\(segment(username))/password", body: PasswordResetRequest(password: password))
    }

    // MARK: Apps and grants

    public func appRequests(pendingOnly: Bool = false) async throws(HomeError) -> [WireAppRequest] {
        try await connection.send("GET", "apps/requests" + (pendingOnly ? "?status=pending" : ""))
    }

    /// Approves an app's request with the device types chosen (nil: what it asked for) and
    /// whether sensitive devices (locks, garage doors, alarms) are included.
    public func approve(
        request id: String, deviceTypes: [IDRef]? = nil, includeSensitive: Bool = false, canControl: Bool = true,
        sensitiveDevices: [DeviceID]? = nil, automationTypes: [WireAutomationTypeRef]? = nil
    ) async throws(HomeError) -> WireAppRequest {
        try await connection.send(
            "POST", "apps/requests/\(segment(id))/approve",
            body: ApproveRequest(
                deviceTypes: deviceTypes, includeSensitive: includeSensitive, canControl: canControl, sensitiveDevices: sensitiveDevices,
                automationTypes: automationTypes))
    }

    /// Changes a live grant: what is left nil keeps its value. The app's open subscriptions
    /// follow at once (devices leaving its scope vanish from its sets).
    public func editGrant(
        _ id: String, deviceTypes: [IDRef]? = nil, includeSensitive: Bool? = nil, canControl: Bool? = nil, sensitiveDevices: [DeviceID]? = nil
    ) async throws(HomeError) -> WireGrant {
        try await connection.send(
            "PATCH", "grants/\(segment(id))",
            body: ApproveRequest(
                deviceTypes: deviceTypes, includeSensitive: includeSensitive, canControl: canControl, sensitiveDevices: sensitiveDevices))
    }

    public func deny(request id: String) async throws(HomeError) -> WireAppRequest {
        try await connection.send("POST", "apps/requests/\(segment(id))/deny", body: nil as String?)
    }

    public func grants() async throws(HomeError) -> [WireGrant] { try await connection.send("GET", "grants") }

    /// Revokes an app's grant: its WebSockets close at once, its next call gets `permissionDenied`.
    public func revokeGrant(_ id: String) async throws(HomeError) {
        try await connection.send("DELETE", "grants/\(segment(id))", body: nil as String?)
    }

    // MARK: Daemon

    public func plugins() async throws(HomeError) -> [WirePlugin] { try await connection.send("GET", "plugins") }
    public func catalog() async throws(HomeError) -> WireCatalog { try await connection.send("GET", "catalog") }
}
