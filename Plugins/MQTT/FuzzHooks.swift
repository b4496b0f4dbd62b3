import DriverAPI
public import HomeModel

/// Entry points for `mqtt-fuzz` and the hostile-input tests: the plugin's parsers and its pure
/// registry, driven with arbitrary input, with no broker. Nothing here does I/O.
///
/// Every hook returns normally for every input (a refusal is a result, not a crash); a crash
/// or a hang is the bug the fuzzer looks for.
public struct MQTTInputHarness {
    var registry: Registry

    /// A connected registry with the default settings (discovery prefix `homeassistant`).
    public init() {
        registry = Registry()
        _ = registry.connectionUp()
    }

    /// Handles one message; returns how many effects it produced.
    @discardableResult
    public mutating func receive(topic: String, payload: [UInt8]) -> Int {
        registry.receive(Message(topic: topic, payload: payload)).count
    }

    /// Every topic the registry routes (state and availability topics of its entities).
    public var routedTopics: [String] { registry.routes.keys.sorted() }

    /// The number of entities and devices (to check the caps).
    public var entityCount: Int { registry.entities.count }
    public var deviceCount: Int { registry.devices.count }

    /// Runs every command and attribute write every entity offers, once per argument set;
    /// returns how many produced an action (the others were refused with an error).
    @discardableResult
    public mutating func commandEverything(arguments: [[String: Value]]) -> Int {
        var produced = 0
        for (key, entity) in registry.entities.sorted(by: { $0.key < $1.key }) {
            guard let device = registry.placement[key], let type = entity.deviceType else { continue }
            for command in entity.commands.keys.sorted(by: { ($0.trait.rawValue, $0.command.rawValue) < ($1.trait.rawValue, $1.command.rawValue) }) {
                for args in arguments {
                    let c = DriverCommand(localID: device, deviceType: type, trait: command.trait, command: command.command, arguments: args)
                    if let resolved = try? registry.action(for: c) {
                        produced += 1
                        _ = registry.assume(resolved)
                    }
                }
            }
            for write in entity.writes.keys.sorted(by: { ($0.trait.rawValue, $0.attribute.rawValue) < ($1.trait.rawValue, $1.attribute.rawValue) }) {
                for args in arguments {
                    let w = DriverWrite(localID: device, deviceType: type, trait: write.trait, attribute: write.attribute, value: args["value"] ?? .null)
                    if let resolved = try? registry.action(for: w) {
                        produced += 1
                        _ = registry.assume(resolved)
                    }
                }
            }
        }
        return produced
    }

    /// Command arguments at and beyond the edges of every range the plugin's commands take.
    public static let extremeArguments: [[String: Value]] = [
        [:], ["value": .int(0)], ["value": .int(100)], ["value": .int(Int64.max)], ["value": .int(Int64.min)],
        ["value": .double(1e300)], ["value": .double(-1e300)], ["value": .string("nan")], ["value": .int(-27315)],
        ["level": .int(254)], ["level": .int(1)], ["Level": .int(-1)], ["level": .int(Int64.max)],
        ["liftPercent100thsValue": .int(0)], ["liftPercent100thsValue": .int(10000)], ["LiftPercent100thsValue": .int(Int64.min)],
        ["colorTemperatureMireds": .int(1)], ["colorTemperatureMireds": .int(65279)], ["ColorTemperatureMireds": .int(Int64.max)],
        ["amount": .int(127)], ["Amount": .int(Int64.max)], ["amount": .int(Int64.min)],
    ]

    /// Compiles a template and renders it for a payload; returns the rendered text, or the
    /// error that refused it.
    public static func renderTemplate(_ source: String, payload: [UInt8]) -> Result<String, any Error> {
        do {
            let template = try Template(source)
            return .success(try template.render(Message(topic: "t", payload: payload).variables).templateText)
        } catch {
            return .failure(error)
        }
    }

    /// Whether a topic is valid for a subscription (nil) or why not.
    public static func topicProblem(_ topic: String, publish: Bool) -> String? {
        MQTTTopic.problem(topic, publish ? .publish : .subscribe)
    }
}
