import HomeCore
import HomeModel
import Logging
import MatterInteraction
import Synchronization

/// A controller's write or command, checked, waiting to go through the core in order.
enum PendingAction: Sendable {
    case invoke(CommandRequest)
    case write(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value)

    var device: DeviceID {
        switch self {
        case .invoke(let r): r.device
        case .write(let d, _, _, _, _): d
        }
    }
}

/// What the clusters of the bridged endpoints read, and where their writes and commands go:
/// the exposed devices' current states (the door's view), the room names and the policy.
/// Reads answer from memory under a lock (the IM engine calls synchronously); writes and
/// commands are checked here — so a controller gets CONSTRAINT_ERROR, UNSUPPORTED_ACCESS …
/// at once — and then queued for the core, whose answer comes back as a state change.
final class BridgeShared: Sendable {
    struct State {
        var policy = ExposurePolicy.default
        var devices: [DeviceID: DeviceSnapshot] = [:]
        /// The room names last seen (to tell which devices' Fixed Label a rename changes).
        var rooms: [RoomID: String] = [:]
        var actions: AsyncStream<PendingAction>.Continuation?
    }

    let state = Mutex(State())
    let catalog: Catalog
    let logger: Logger
    /// A room's name now (the core's state; the room list the session follows may lag).
    let roomNamed: @Sendable (RoomID) -> String?

    init(catalog: Catalog, logger: Logger, roomNamed: @escaping @Sendable (RoomID) -> String?) {
        self.catalog = catalog
        self.logger = logger
        self.roomNamed = roomNamed
    }

    func device(_ id: DeviceID) -> DeviceSnapshot? { state.withLock { $0.devices[id] } }

    func roomName(of id: DeviceID) -> String? {
        state.withLock { $0.devices[id]?.roomID }.flatMap(roomNamed)
    }

    // MARK: Values

    func value(_ device: DeviceID, _ type: DeviceTypeID, _ path: ConcreteAttributePath) -> Value? {
        let trait = TraitID(path.cluster)
        let found = state.withLock { $0.devices[device]?.type(type)?.traits[trait]?[AttributeID(path.attribute)] }
        if let found { return found }
        // A nullable attribute the device has not reported reads as null (unknown).
        return catalog.trait(trait)?.attribute(AttributeID(path.attribute))?.nullable == true ? .null : nil
    }

    // MARK: Writes and commands

    /// Checks a controller's command on the device's exposed state now and queues it.
    func invoke(_ device: DeviceID, _ type: DeviceTypeID, _ path: ConcreteCommandPath, _ command: CommandDescriptor, fields: [String: Value])
        -> InteractionStatus
    {
        let trait = TraitID(path.cluster)
        let checked = check(device, type, trait, what: "command \(path)") { descriptor throws(HomeError) in
            let arguments = try command.validate(arguments: fields, trait: descriptor)
            return .invoke(CommandRequest(device: device, deviceType: type, trait: trait, command: command.id, arguments: arguments))
        }
        return checked.status(unsupported: .unsupportedCommand)
    }

    /// Checks a controller's attribute write and queues it.
    func write(_ device: DeviceID, _ type: DeviceTypeID, _ path: ConcreteAttributePath, _ value: Value) -> InteractionStatus {
        let trait = TraitID(path.cluster)
        let attribute = AttributeID(path.attribute)
        let checked = check(device, type, trait, what: "write \(path)") { descriptor throws(HomeError) in
            guard let a = descriptor.attribute(attribute), a.writable else {
                throw .unsupportedOperation("\(descriptor.name) attribute \(attribute.hex) is not writable")
            }
            try a.validate(value, in: descriptor)
            return .write(device: device, deviceType: type, trait: trait, attribute: attribute, value: value)
        }
        return checked.status(unsupported: .unsupportedWrite)
    }

    enum Checked {
        case queued
        case refused(InteractionStatus)
        case error(HomeError)

        func status(unsupported: InteractionStatus) -> InteractionStatus {
            switch self {
            case .queued: .success
            case .refused(let s): s
            case .error(let e): BridgeShared.status(for: e, unsupported: unsupported)
            }
        }
    }

    private func check(
        _ id: DeviceID, _ type: DeviceTypeID, _ trait: TraitID, what: String, _ build: (TraitDescriptor) throws(HomeError) -> PendingAction
    ) -> Checked {
        let (policy, device, actions) = state.withLock { ($0.policy, $0.devices[id], $0.actions) }
        guard let device, let typeState = device.type(type), let traitState = typeState.traits[trait], let descriptor = catalog.trait(trait) else {
            return .refused(.unsupportedEndpoint)
        }
        // A read-only exposure: controllers observe, they do not act (the core would refuse too).
        guard policy.allowControl else {
            logger.notice("Matter \(what) refused: the exposure is read-only", metadata: ["device": "\(id)"])
            return .refused(.unsupportedAccess)
        }
        let action: PendingAction
        do {
            action = try build(descriptor)
        } catch {
            logger.notice("Matter \(what) refused: \(error.message)", metadata: ["device": "\(id)"])
            return .error(error)
        }
        switch traitState.sourceConnectivity.connectivityState {
        case .offline, .unknown:
            logger.notice("Matter \(what) refused: \(device.name) cannot be reached", metadata: ["device": "\(id)"])
            return .refused(.failure)
        case .online, .partiallyOnline:
            break
        }
        guard let actions, case .enqueued = actions.yield(action) else {
            logger.warning("Matter \(what) dropped: the bridge is stopping or too many commands wait", metadata: ["device": "\(id)"])
            return .refused(.busy)
        }
        return .queued
    }

    /// The Interaction Model status for the core's refusal (Matter Core Specification 8.10).
    static func status(for error: HomeError, unsupported: InteractionStatus) -> InteractionStatus {
        switch error.code {
        case .permissionDenied: .unsupportedAccess
        case .notFound: .unsupportedEndpoint
        case .invalidArgument: .constraintError
        case .unsupportedOperation: unsupported
        case .timeout: .timeout
        default: .failure
        }
    }
}

/// A catalogue cluster's values on one endpoint: one device type of one device.
struct DeviceValues: ClusterValueSource {
    let shared: BridgeShared
    let device: DeviceID
    let deviceType: DeviceTypeID

    func value(_ path: ConcreteAttributePath) -> Value? { shared.value(device, deviceType, path) }

    func write(_ path: ConcreteAttributePath, _ value: Value) -> InteractionStatus { shared.write(device, deviceType, path, value) }

    func invoke(_ path: ConcreteCommandPath, _ command: CommandDescriptor, fields: [String: Value]) -> InteractionStatus {
        shared.invoke(device, deviceType, path, command, fields: fields)
    }
}
