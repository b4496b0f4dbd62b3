public import Foundation
public import HearthAPI
public import HomeModel
import Synchronization

/// The home over the network: the same shape as HomeCore's in-process `Home` (Google Home
/// APIs `Home`), for a Swift app or the CLI talking to hearthd.
///
/// ```swift
/// let store = FileSessionStore.standard(name: "my-dashboard")
/// let home = try await Home.restoreSession(store: store)
///     ?? Home.connect(url: url, appName: "Dashboard", deviceTypes: [OnOffLightDeviceType.identifier], store: store)
/// for device in try await home.devices().list() { print(device.name) }
/// for await devices in home.devices().batched() { … }
/// if let light = await device.types.get(OnOffLightDeviceType.self) { try await light.matterTraits.onOffTrait?.toggle() }
/// try await home.disconnect()   // revokes the token
/// ```
public struct Home: HomeBackend {
    public let connection: HearthConnection
    /// The stored credentials, when this session has a store.
    public let credentials: HearthCredentials?
    let store: (any SessionStore)?

    /// A session from a known token (no consent step, nothing stored).
    public init(connection: HearthConnection, credentials: HearthCredentials? = nil, store: (any SessionStore)? = nil) {
        self.connection = connection
        self.credentials = credentials
        self.store = store
    }

    /// What an app shows its user while the admin decides.
    public struct PendingConsent: Sendable {
        /// The request's ID: the admin approves it with `hearth grants approve <id>`.
        public let requestID: String
        public let appName: String
    }

    /// Connects an app through the consent step: asks hearthd for access to `deviceTypes`,
    /// waits (long polls) until an admin approves, stores the token it gets.
    ///
    /// - Parameters:
    ///   - configuration: how the app wants its operations checked (kept with its grant).
    ///   - onPending: called once with the request ID to show the user ("ask an admin to approve …").
    ///   - maxWait: how long to wait for the admin in all.
    /// - Throws: `permissionDenied` when the admin denies; `timeout` after `maxWait`.
    public static func connect(
        url: URL, appName: String, deviceTypes: [DeviceTypeID] = [], automationTypes: [WireAutomationType] = [],
        configuration: HomeClientConfiguration = .init(),
        store: (any SessionStore)? = nil, maxWait: Duration = .seconds(600),
        onPending: @Sendable (PendingConsent) async -> Void = { _ in }
    ) async throws(HomeError) -> Home {
        let anonymous = HearthConnection(baseURL: url, token: nil)
        let request: WireAppRequest = try await anonymous.send(
            "POST", "apps/requests",
            body: AppAccessRequest(
                name: appName, deviceTypes: deviceTypes.map { .number($0.rawValue) },
                automationTypes: automationTypes.isEmpty
                    ? nil : automationTypes.map { WireAutomationTypeRef(deviceType: .number($0.deviceType.rawValue), trait: .number($0.trait.rawValue)) }))
        guard let secret = request.secret else { throw .internal("hearthd did not hand out a request secret") }
        await onPending(PendingConsent(requestID: request.id, appName: request.appName))
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: maxWait)
        while clock.now < deadline {
            let remaining = clock.now.duration(to: deadline)
            let wait = min(Int(remaining.components.seconds), 30)
            let (data, status) = try await anonymous.raw(
                "POST", "apps/requests/\(segment(request.id))/claim", body: ClaimRequest(
                    secret: secret, waitSeconds: max(wait, 0), strictOperationValidation: configuration.strictOperationValidation))
            guard status == 200 else {
                if wait <= 0 { break }
                continue
            }
            let answer: WireAppRequest
            do {
                answer = try HearthConnection.decoder.decode(WireAppRequest.self, from: data)
            } catch {
                throw .internal("hearthd's answer to the consent step could not be read: \(error)")
            }
            guard let token = answer.token, let tokenID = answer.tokenID else { throw .internal("hearthd approved but sent no token") }
            let credentials = HearthCredentials(url: url.absoluteString, token: token, tokenID: tokenID, principal: "app:\(answer.appName)")
            try save(credentials, in: store)
            return Home(connection: anonymous.with(token: token), credentials: credentials, store: store)
        }
        throw .timeout("no admin decided on app request \(request.id) within \(maxWait)")
    }

    /// Signs a user in with a password and stores the token.
    public static func signIn(url: URL, username: String, password: String, store: (any SessionStore)? = nil) async throws(HomeError) -> Home {
        let t: TokenResponse = try await HearthConnection(baseURL: url, token: nil).send(
            "POST", "auth/login", body: LoginRequest(username: username, password: password))
        return try started(url: url, t, store: store)
    }

    /// Uses the one-time setup code of a new hearthd: sets the admin's password and signs in.
    public static func setup(url: URL, code: String, password: String, store: (any SessionStore)? = nil) async throws(HomeError) -> Home {
        let t: TokenResponse = try await HearthConnection(baseURL: url, token: nil).send(
            "POST", "auth/setup", body: SetupRequest(code: code, password: password))
        return try started(url: url, t, store: store)
    }

    static func started(url: URL, _ t: TokenResponse, store: (any SessionStore)?) throws(HomeError) -> Home {
        let credentials = HearthCredentials(url: url.absoluteString, token: t.token, tokenID: t.tokenID, principal: t.principal)
        try save(credentials, in: store)
        return Home(connection: HearthConnection(baseURL: url, token: t.token), credentials: credentials, store: store)
    }

    static func save(_ c: HearthCredentials, in store: (any SessionStore)?) throws(HomeError) {
        do {
            try store?.save(c)
        } catch {
            throw .internal("could not store the session: \(error)")
        }
    }

    /// The stored session, or nil when there is none or hearthd no longer accepts its token
    /// (revoked, or the user removed); a refused token is forgotten.
    public static func restoreSession(store: any SessionStore) async throws(HomeError) -> Home? {
        let stored: HearthCredentials?
        do {
            stored = try store.load()
        } catch {
            throw .internal("could not read the stored session: \(error)")
        }
        guard let stored else { return nil }
        let home = Home(connection: HearthConnection(baseURL: try HearthConnection.url(stored.url), token: stored.token), credentials: stored, store: store)
        do {
            _ = try await home.me()
            return home
        } catch where error.code == .permissionDenied || error.code == .unauthenticated {
            try? store.clear()
            return nil
        }
    }

    /// Ends this session: hearthd revokes the token (its subscriptions end), the store forgets it.
    public func disconnect() async throws(HomeError) {
        try await connection.send("POST", "auth/logout", body: nil as String?)
        try? store?.clear()
    }

    /// Changes the signed-in user's password. This session stays signed in; every other
    /// session of the user ends. A wrong `current` is `unauthenticated` (and counts as a
    /// failed login); apps get `permissionDenied`.
    public func changePassword(current: String, new: String) async throws(HomeError) {
        try await connection.send("POST", "auth/password", body: PasswordChangeRequest(current: current, new: new))
    }

    /// Who this session is.
    public func me() async throws(HomeError) -> MeResponse { try await connection.send("GET", "me") }

    // MARK: - Queries

    /// Commissioned devices this session may see.
    public func devices() -> RemoteQuery<HomeDevice> { deviceQuery(path: "devices", SubscriptionQuery.devices) }

    /// Devices waiting to be commissioned (admins; empty for others).
    public func discoveredDevices() -> RemoteQuery<HomeDevice> { deviceQuery(path: "discovered", SubscriptionQuery.discovered) }

    func deviceQuery(path: String, _ query: @escaping @Sendable (SubscriptionMode) -> SubscriptionQuery) -> RemoteQuery<HomeDevice> {
        RemoteQuery(home: self, path: path, query: query) { set in
            guard case .devices(let d) = set else { return [] }
            return d.map { HomeDevice(snapshot: $0.snapshot, backend: self) }
        } element: { e in
            guard case .device(let d) = e else { return nil }
            return HomeDevice(snapshot: d.snapshot, backend: self)
        } decode: { data in
            try HearthConnection.decoder.decode([WireDevice].self, from: data).map { HomeDevice(snapshot: $0.snapshot, backend: self) }
        }
    }

    public func structures() -> RemoteQuery<StructureSnapshot> {
        RemoteQuery(home: self, path: "structures", query: SubscriptionQuery.structures) { set in
            guard case .structures(let s) = set else { return [] }
            return s
        } element: { e in
            guard case .structure(let s) = e else { return nil }
            return s
        } decode: {
            try HearthConnection.decoder.decode([StructureSnapshot].self, from: $0)
        }
    }

    public func rooms() -> RemoteQuery<RoomSnapshot> {
        RemoteQuery(home: self, path: "rooms", query: SubscriptionQuery.rooms) { set in
            guard case .rooms(let r) = set else { return [] }
            return r
        } element: { e in
            guard case .room(let r) = e else { return nil }
            return r
        } decode: {
            try HearthConnection.decoder.decode([RoomSnapshot].self, from: $0)
        }
    }

    /// One device now, or `notFound`.
    public func currentDevice(id: DeviceID) async throws(HomeError) -> HomeDevice {
        let d: WireDevice = try await connection.send("GET", "devices/\(segment(id.rawValue))")
        return HomeDevice(snapshot: d.snapshot, backend: self)
    }

    /// The device now and on every change (as in the seed: `home.device(id:)` is live); ends
    /// when it is removed or hidden, or the session is revoked (then ``RemoteUpdates/failure``
    /// is `permissionDenied`).
    public func device(id: DeviceID) -> RemoteUpdates<HomeDevice> {
        let messages = WebSocketFeed.messages(
            connection, subscribe: .subscribe(id: "device", .device(id)), buffer: 1)
        // Its own end counts first: the grant no longer covering this device is not a revocation.
        let own = OwnEnding()
        return RemoteUpdates(AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                loop: for await m in messages {
                    switch m {
                    case .device(_, let d): continuation.yield(HomeDevice(snapshot: d.snapshot, backend: self))
                    case .end(_, .permissionDenied, let message):
                        own.value.withLock { $0 = .permissionDenied(message) }
                        break loop
                    default: break loop
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }, ending: { [connection] in own.value.withLock { $0 } ?? connection.sockets.revocation })
    }

    /// The device now and on every change: the same as ``device(id:)``.
    public func deviceUpdates(id: DeviceID) -> RemoteUpdates<HomeDevice> { device(id: id) }

    /// Live state for every visible device through one subscription: first every commissioned
    /// device, then the devices whose state changed since the previous element, each in its
    /// newest state. Removals and new devices come through ``devices()``. A consumer that falls
    /// far behind is resubscribed and gets every device again.
    ///
    /// On the wire it is `deviceDeltas`: hearthd sends each device whole once, then only the
    /// attributes that changed, which this applies to the devices it keeps (a server that
    /// answers with whole devices, `changed`, is read as well).
    public func changedDevices() -> RemoteUpdates<[HomeDevice]> {
        let messages = WebSocketFeed.messages(
            connection, subscribe: .subscribe(id: "tiles", .deviceDeltas), buffer: 256)
        return RemoteUpdates(AsyncStream { continuation in
            let task = Task {
                var kept: [DeviceID: WireDevice] = [:]
                for await m in messages {
                    let devices: [WireDevice]
                    switch m {
                    case .changed(_, _, let whole): devices = whole
                    case .delta(_, _, let changes):
                        // A change for a device it lacks cannot happen after the first message
                        // (each device comes whole first); such a change is skipped.
                        devices = changes.compactMap { change in
                            guard let d = change.applied(to: kept[change.device]) else { return nil }
                            kept[change.device] = d
                            return d
                        }
                    default: continuation.finish(); return
                    }
                    continuation.yield(devices.map { HomeDevice(snapshot: $0.snapshot, backend: self) })
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }, ending: ending)
    }

    /// Device events (button presses, alarms), optionally of one device and trait; never coalesced.
    public func events(device: DeviceID? = nil, trait: TraitID? = nil) -> RemoteUpdates<DeviceEvent> {
        let messages = WebSocketFeed.messages(
            connection,
            subscribe: .subscribe(id: "events", .events(device: device, trait: trait.map { .number($0.rawValue) })),
            buffer: 4096)
        return RemoteUpdates(AsyncStream { continuation in
            let task = Task {
                for await m in messages {
                    guard case .event(_, let e) = m else { break }
                    continuation.yield(e.model)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }, ending: ending)
    }

    /// The raw messages of one subscription (what `hearth watch` prints), until it ends.
    public func messages(_ subscribe: WSClientMessage) -> AsyncStream<WSServerMessage> {
        let streams: Bool
        switch subscribe {
        case .subscribe(_, .devices(.stream)), .subscribe(_, .discovered(.stream)), .subscribe(_, .rooms(.stream)),
            .subscribe(_, .structures(.stream)), .subscribe(_, .users(.stream)), .subscribe(_, .events), .subscribe(_, .deviceDeltas), .subscribe(_, .automationRuns):
            streams = true
        default: streams = false
        }
        return WebSocketFeed.messages(connection, subscribe: subscribe, buffer: streams ? 4096 : 1)
    }

    /// `permissionDenied` once hearthd ended this session's subscriptions because its access was
    /// revoked; nil while it is live. A remote sequence or publisher that ended says this as
    /// its failure.
    public var revocation: HomeError? { connection.sockets.revocation }

    /// The newest scope hearthd pushed over this session's WebSocket (`grantUpdated`: an admin
    /// edited the grant or approved ``presentPermissionsUpdate(deviceTypes:maxWait:onPending:)``);
    /// nil until one came.
    public var grantedScope: WireScope? { connection.sockets.grantedScope }

    /// What a subscription of this session reports as its failure when it ends.
    var ending: @Sendable () -> HomeError? { { [connection] in connection.sockets.revocation } }

    // MARK: - HomeBackend (what typed traits call)

    public func invoke(_ request: CommandRequest) async throws -> Value {
        let answer: CommandWireResponse = try await connection.send(
            "POST", "commands",
            body: CommandWireRequest(
                device: request.device, type: .number(request.deviceType.rawValue), trait: .number(request.trait.rawValue),
                command: .number(request.command.rawValue), args: request.arguments))
        return answer.result
    }

    public func write(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value) async throws {
        try await connection.send(
            "POST", "attributes",
            body: WriteWireRequest(
                device: device, type: .number(deviceType.rawValue), trait: .number(trait.rawValue), attribute: .number(attribute.rawValue),
                value: value))
    }

    public func deviceUpdates(_ id: DeviceID) -> AsyncStream<DeviceSnapshot> {
        let updates = device(id: id)
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                for await d in updates { continuation.yield(d.snapshot) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public func setName(device: DeviceID, name: String) async throws -> DeviceSnapshot {
        try await update(device: device, DevicePatchRequest(name: name)).snapshot
    }

    // MARK: - Commands by name (the CLI)

    /// Runs a command named the way a person would (`"OnOffLight"`, `"OnOff"`, `"toggle"`).
    public func command(device: DeviceID, type: IDRef, trait: IDRef, command: IDRef, args: [String: Value] = [:]) async throws(HomeError) -> Value {
        let answer: CommandWireResponse = try await connection.send(
            "POST", "commands", body: CommandWireRequest(device: device, type: type, trait: trait, command: command, args: args))
        return answer.result
    }

    /// Writes an attribute named the way a person would.
    public func set(device: DeviceID, type: IDRef, trait: IDRef, attribute: IDRef, value: Value) async throws(HomeError) {
        try await connection.send(
            "POST", "attributes", body: WriteWireRequest(device: device, type: type, trait: trait, attribute: attribute, value: value))
    }
}

/// What an app chooses when it connects (Google Home APIs `HomeClientConfiguration`).
public struct HomeClientConfiguration: Sendable, Hashable {
    /// true: a command or write the catalogue says the device cannot take is refused before it
    /// reaches a driver (`unsupportedOperation`, `invalidArgument`); false: it is sent, and the
    /// driver's refusal comes back as `driverError`. nil: hearthd's `core.strictOperationValidation`.
    public var strictOperationValidation: Bool?

    public init(strictOperationValidation: Bool? = nil) { self.strictOperationValidation = strictOperationValidation }
}

/// Why one subscription ended, when it says so itself (a lock-guarded box the subscription's
/// task writes and ``RemoteUpdates/failure`` reads).
final class OwnEnding: Sendable {
    let value = Mutex<HomeError?>(nil)
}
