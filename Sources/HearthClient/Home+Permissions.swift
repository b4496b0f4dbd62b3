import Foundation
public import HearthAPI
public import HomeModel

extension Home {
    /// What an app shows its user while an admin decides on a permission change.
    public struct PendingPermissionsUpdate: Sendable {
        /// The change's ID: an admin approves it with `hearth grants approve <id>`.
        public let changeID: String
        public let appName: String
    }

    /// Asks for another scope for this app's grant (Google Home APIs `presentPermissionsUpdate`):
    /// wider or narrower, `deviceTypes` replacing what it has (empty: every device type). Waits
    /// (long polls) until an admin decides.
    ///
    /// On approval the grant changes at once: the app's open subscriptions follow without
    /// reconnecting (devices leaving the scope vanish from `batched()`, new ones appear; a
    /// `device(id:)` subscription to a device now outside it ends with `permissionDenied`).
    ///
    /// ```swift
    /// let scope = try await home.presentPermissionsUpdate(deviceTypes: [OnOffLightDeviceType.identifier, ContactSensorDeviceType.identifier]) {
    ///     print("Ask an admin: hearth grants approve \($0.changeID)")
    /// }
    /// ```
    ///
    /// - Returns: the grant's scope as the admin approved it (they may have chosen otherwise).
    /// - Throws: `permissionDenied` when the admin denies (the grant stays as it was) or this
    ///   is not an app's session; `conflict` when the app asked again meanwhile or the grant was
    ///   revoked; `timeout` after `maxWait`.
    public func presentPermissionsUpdate(
        deviceTypes: [DeviceTypeID], maxWait: Duration = .seconds(600), onPending: @Sendable (PendingPermissionsUpdate) async -> Void = { _ in }
    ) async throws(HomeError) -> WireScope {
        let change: WireGrantChange = try await connection.send(
            "POST", "apps/permissions", body: PermissionsUpdateRequest(deviceTypes: deviceTypes.map { .number($0.rawValue) }))
        await onPending(PendingPermissionsUpdate(changeID: change.id, appName: change.appName))
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: maxWait)
        while clock.now < deadline {
            let wait = max(min(Int(clock.now.duration(to: deadline).components.seconds), 30), 1)
            let answer: WireGrantChange = try await connection.send("GET", "apps/permissions/\(segment(change.id))?waitSeconds=\(wait)")
            switch answer.status {
            case .pending: continue
            case .approved:
                guard let scope = answer.scope else { throw .internal("hearthd approved permission change \(change.id) but sent no scope") }
                return scope
            case .denied: throw .permissionDenied("an admin denied this app's permission change \(change.id); its grant stays as it was")
            case .superseded: throw .conflict("permission change \(change.id) was replaced by a newer one from this app")
            case .cancelled: throw .conflict("this app's grant was revoked before an admin decided on \(change.id)")
            }
        }
        throw .timeout("no admin decided on permission change \(change.id) within \(maxWait)")
    }

    // MARK: Admins

    /// Permission changes apps asked for, newest first; only pending ones when asked.
    public func grantChanges(pendingOnly: Bool = false) async throws(HomeError) -> [WireGrantChange] {
        try await connection.send("GET", pendingOnly ? "grants/changes?status=pending" : "grants/changes")
    }

    /// Approves a permission change: what is left nil is what the app asked for (device types)
    /// or what the grant has now (the rest). The app's open subscriptions follow at once.
    public func approveChange(
        _ id: String, deviceTypes: [IDRef]? = nil, includeSensitive: Bool? = nil, canControl: Bool? = nil, sensitiveDevices: [DeviceID]? = nil
    ) async throws(HomeError) -> WireGrantChange {
        try await connection.send(
            "POST", "grants/changes/\(segment(id))/approve",
            body: ApproveRequest(
                deviceTypes: deviceTypes, includeSensitive: includeSensitive, canControl: canControl, sensitiveDevices: sensitiveDevices))
    }

    /// Denies a permission change; the grant stays as it is.
    public func denyChange(_ id: String) async throws(HomeError) -> WireGrantChange {
        try await connection.send("POST", "grants/changes/\(segment(id))/deny", body: nil as String?)
    }
}
