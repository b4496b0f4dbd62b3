public import HomeModel

/// Who a plugin is: a stable ID (the first half of every device ID it reports), a display
/// name and a version.
public struct PluginManifest: Hashable, Sendable, Codable {
    /// Stable, lowercase, `[a-z0-9-]+`: `gpio`, `mqtt`, `demo`.
    public let id: String
    public let name: String
    public let version: String
    /// One line on what the plugin bridges.
    public let summary: String

    public init(id: String, name: String, version: String, summary: String = "") {
        self.id = id
        self.name = name
        self.version = version
        self.summary = summary
    }
}

/// A driver plugin: reads hardware, describes it as device types and traits, reports state,
/// and carries out commands.
///
/// A plugin is a class built into a `.so` that exports the C entry points of
/// ``HearthPluginABI`` (see `docs/writing-a-plugin.md`). The host creates it once, validates
/// its configuration, then calls ``run(context:)`` as a long-running service: restarted with
/// backoff if it throws, cancelled on shutdown.
public protocol DriverPlugin: AnyObject, Sendable {
    var manifest: PluginManifest { get }

    /// The plugin's configuration schema: the `Decodable` type its section of `hearth.yaml`
    /// decodes into, or nil when it takes no configuration.
    ///
    /// The host decodes the section into this type before it calls ``validate(configuration:)``
    /// and refuses to start the plugin when that fails, naming the file, line and key path
    /// (`hearth.yaml:14: plugins.gpio.lines[2].pin: expected an integer`). The default is nil.
    var configurationType: (any Decodable.Type)? { get }

    /// Checks the plugin's section of `hearth.yaml` before the plugin starts, beyond what
    /// decoding ``configurationType`` already checks (ranges, cross-field rules).
    ///
    /// Decode your `Codable` configuration with ``PluginConfiguration/decode(_:)``: its errors
    /// name the key path and line; report other problems with
    /// ``PluginConfiguration/problem(at:_:)``. The default accepts anything.
    func validate(configuration: PluginConfiguration) throws

    /// The plugin's own traits (``HomeModel/TraitDescriptor/vendor(namespace:id:name:swiftName:revision:attributes:commands:events:)``):
    /// the host checks them and adds them to the running catalogue before ``run(context:)``,
    /// so their values are validated, their names and units shown by the API, CLI and web
    /// page, and commands to them are routed in strict mode. A plugin whose declaration is
    /// refused does not start. The default is none.
    var vendorTraits: [TraitDescriptor] { get }

    /// Runs until cancelled: publish devices, then report their state as it changes.
    ///
    /// Return (or throw `CancellationError`) when the task is cancelled. Throwing anything else
    /// marks the plugin failed; the host restarts it with backoff.
    func run(context: any DriverContext) async throws

    /// Carries out a command addressed to one of this plugin's devices.
    ///
    /// Do not report the new state here unless the device is optimistic: report it when the
    /// hardware confirms it. Throw ``HomeError`` (`unsupportedOperation`, `deviceOffline`,
    /// `invalidArgument`…) to refuse.
    /// - Returns: the command's response, ``Value/null`` when it has none.
    func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value

    /// Writes a writable attribute. The default refuses with `unsupportedOperation`.
    func write(_ write: DriverWrite, context: any DriverContext) async throws

    /// The plugin's own checks for `hearth doctor` (hearthd's offline `doctor` subcommand):
    /// whether the machine can give the plugin what it needs (device nodes and their
    /// permissions, a library, a broker), each finding saying what to do about a problem.
    ///
    /// Called without ``run(context:)`` and without a ``DriverContext``, in a short-lived
    /// process, possibly as another user than the daemon's; check, do not change anything.
    /// Finish within a few seconds (time out network checks). The default has no checks.
    func doctor(_ request: DoctorRequest) async -> [DoctorFinding]
}

extension DriverPlugin {
    public var configurationType: (any Decodable.Type)? { nil }

    public var vendorTraits: [TraitDescriptor] { [] }

    public func validate(configuration: PluginConfiguration) throws {}

    /// What the host runs before starting the plugin: decodes the section into
    /// ``configurationType`` (when there is one), then calls ``validate(configuration:)``.
    ///
    /// - Throws: ``HomeError`` `invalidArgument` naming the file, line and key path, or whatever
    ///   ``validate(configuration:)`` throws.
    public func checkConfiguration(_ configuration: PluginConfiguration) throws {
        if let type = configurationType {
            func decode<T: Decodable>(_ type: T.Type) throws(HomeError) { _ = try configuration.decode(type) }
            try decode(type)
        }
        try validate(configuration: configuration)
    }

    public func doctor(_ request: DoctorRequest) async -> [DoctorFinding] { [] }

    public func write(_ write: DriverWrite, context: any DriverContext) async throws {
        throw HomeError.unsupportedOperation(
            "plugin \(manifest.id) does not support writing attribute \(write.attribute.hex) of trait \(write.trait.hex)")
    }
}

/// A command the core routes to a plugin, already checked against the catalogue.
public struct DriverCommand: Hashable, Sendable, Codable {
    /// The plugin's own identifier of the device.
    public let localID: String
    public let deviceType: DeviceTypeID
    public let trait: TraitID
    public let command: CommandID
    /// Arguments keyed by the spec's field names.
    public let arguments: [String: Value]
    /// Who asked: `user:alice`, `app:…`, `rule:…`.
    public let origin: String

    public init(
        localID: String, deviceType: DeviceTypeID, trait: TraitID, command: CommandID,
        arguments: [String: Value] = [:], origin: String = ""
    ) {
        self.localID = localID
        self.deviceType = deviceType
        self.trait = trait
        self.command = command
        self.arguments = arguments
        self.origin = origin
    }
}

/// An attribute write the core routes to a plugin, already checked against the catalogue.
public struct DriverWrite: Hashable, Sendable, Codable {
    public let localID: String
    public let deviceType: DeviceTypeID
    public let trait: TraitID
    public let attribute: AttributeID
    public let value: Value
    public let origin: String

    public init(localID: String, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value, origin: String = "") {
        self.localID = localID
        self.deviceType = deviceType
        self.trait = trait
        self.attribute = attribute
        self.value = value
        self.origin = origin
    }
}
