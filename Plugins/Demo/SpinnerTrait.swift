import HomeModel

/// The demo's vendor trait: a spinner on the demo lamp (a lamp with a fan, say), declared
/// under the namespace `ExampleOrganization` in the test vendor's manufacturer-specific range.
/// Apps read it as `deviceType.traits[ExampleOrganization.SpinnerTrait.self]` with a typed view
/// of their own (see `docs/writing-a-plugin.md`).
enum Spinner {
    static let trait: TraitID = 0xFFF1_FC01
    static let rpm: AttributeID = 0x0000
    static let spin: CommandID = 0x00
    static let stop: CommandID = 0x01
    static let speedReached: EventID = 0x00
    static let maximumRPM: Int64 = 3000

    static let descriptor = TraitDescriptor.vendor(
        namespace: "ExampleOrganization", id: trait, name: "Spinner",
        attributes: [.vendor(id: rpm, name: "RPM", type: .uint16, minimum: 0, maximum: maximumRPM, unit: "rpm")],
        commands: [
            .vendor(id: spin, name: "Spin", fields: [.vendor(name: "RPM", type: .uint16, minimum: 0, maximum: maximumRPM)]),
            .vendor(id: stop, name: "Stop"),
        ],
        events: [.vendor(id: speedReached, name: "SpeedReached", fields: [.vendor(name: "RPM", type: .uint16)])])
}
