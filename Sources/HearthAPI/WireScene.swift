public import HomeModel

/// A scene on the wire (`/scenes`, issue 18): IDs as the API writes them elsewhere
/// (`test:lamp`, `0x0006`); names are accepted for types, traits and attributes in requests.
///
/// `POST /scenes` with `capture: true` takes targets without values and stores the devices'
/// current ones (admins).
public struct WireScene: Codable, Sendable, Hashable {
    public struct Target: Codable, Sendable, Hashable {
        public var device: String
        public var type: String?
        public var trait: String
        public var attribute: String
        /// Absent only in a request with `capture: true`.
        public var value: Value?
        public init(device: String, type: String? = nil, trait: String, attribute: String, value: Value? = nil) {
            self.device = device
            self.type = type
            self.trait = trait
            self.attribute = attribute
            self.value = value
        }
    }
    public var id: String
    public var name: String
    public var structure: String?
    public var room: String?
    public var transitionMilliseconds: Int?
    public var allowSensitive: Bool?
    public var targets: [Target]
    public var revision: Int?
    /// `api` or `config`.
    public var source: String?
    public var configRef: String?
    public var isActive: Bool?
    /// In a request: fill the targets' values from the devices' current state.
    public var capture: Bool?

    public init(
        id: String, name: String, structure: String? = nil, room: String? = nil, transitionMilliseconds: Int? = nil, allowSensitive: Bool? = nil,
        targets: [Target], capture: Bool? = nil
    ) {
        self.id = id
        self.name = name
        self.structure = structure
        self.room = room
        self.transitionMilliseconds = transitionMilliseconds
        self.allowSensitive = allowSensitive
        self.targets = targets
        self.capture = capture
    }
}
